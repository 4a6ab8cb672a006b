module.exports = async function globalTeardown() {
  await globalThis.__LOOPWRIGHT_PG__?.stop();
};
