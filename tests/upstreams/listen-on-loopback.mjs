// Preloaded (`node --import`) into a spawned test server that binds its port itself (server-everything
// calls app.listen(PORT)): binds it to 127.0.0.1 instead of every interface, and prints the port it got
// on stderr, so tests can pass PORT=0 and read the port back instead of guessing a free one.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === 'number' || typeof args[0] === 'string') && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  this.once('listening', () => process.stderr.write(`LOOPBACK_PORT=${this.address().port}\n`));
  return listen.apply(this, args);
};
