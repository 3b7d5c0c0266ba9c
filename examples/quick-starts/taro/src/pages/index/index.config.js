// src/pages/index/index.config.js: the page's window, with pull-down refresh (usePullDownRefresh needs it).
export default definePageConfig({ navigationBarTitleText: 'Orders', enablePullDownRefresh: true });
