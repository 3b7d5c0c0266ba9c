// app.js: your login goes here and keeps the session. The stand-in: signed in with the session the
// example backend knows (examples/backend/your-app.ts: "demo-session" is user-1).
App({ globalData: { session: 'demo-session', userId: 'user-1' } });
