export default {
  logger: {
    quiet: false,
    stats: true,
  },
  mini: {},
  h5: {},
};
