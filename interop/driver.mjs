// Drives the reference PDS for the Jetstream interop test: starts @atproto/dev-env's
// TestNetworkNoAppView (in-memory PLC + sqlite PDS) on 127.0.0.1 only, prints one JSON line
// describing it, then answers JSON commands on stdin, one per line, with one JSON line each on
// stdout, prefixed "@@ " so stray library output can never be mistaken for an answer.
//
// Run it from the installed dependency directory (interop/setup copies it there), because ESM
// resolves bare imports next to the importing file.
import net from 'node:net';
import dns from 'node:dns';
import readline from 'node:readline';

// dev-env's servers call listen(port) with no host, which binds every interface. Default the host to
// IPv4 loopback for every server this process opens; "localhost" in the URLs dev-env builds must then
// resolve to 127.0.0.1 first.
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== 'string') {
      args.splice(1, 0, '127.0.0.1');
    }
  } else if (args[0] !== null && typeof args[0] === 'object' && !('path' in args[0]) && args[0].host === undefined) {
    args[0] = { ...args[0], host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};
dns.setDefaultResultOrder('ipv4first');

const { TestNetworkNoAppView } = await import('@atproto/dev-env');
const { AtpAgent } = await import('@atproto/api');

const network = await TestNetworkNoAppView.create({});
const pds = network.pds;
const plc = network.plc;
const pdsPort = pds.server.server.address().port;
const plcPort = plc.port;
for (const [name, addr] of [['pds', pds.server.server.address()]]) {
  if (addr.address !== '127.0.0.1') {
    throw new Error(`${name} listens on ${addr.address}, not 127.0.0.1`);
  }
}

/** did -> { agent, handle, password } */
const accounts = new Map();
let nextAccount = 0;

function agentOf(did) {
  const a = accounts.get(did);
  if (!a) {
    throw new Error(`unknown account ${did}`);
  }
  return a.agent;
}

const ops = {
  async createAccount({ name }) {
    const n = name ?? `user${nextAccount++}`;
    const handle = `${n}.test`;
    const password = `${n}-password`;
    const agent = new AtpAgent({ service: pds.url });
    const res = await agent.createAccount({ email: `${n}@example.test`, handle, password });
    accounts.set(res.data.did, { agent, handle, password });
    return { did: res.data.did, handle };
  },
  async post({ did, text }) {
    const r = await agentOf(did).post({ text, createdAt: new Date().toISOString() });
    return { uri: r.uri, cid: r.cid };
  },
  async like({ did, uri, cid }) {
    const r = await agentOf(did).like(uri, cid);
    return { uri: r.uri, cid: r.cid };
  },
  async follow({ did, subject }) {
    const r = await agentOf(did).follow(subject);
    return { uri: r.uri, cid: r.cid };
  },
  async profile({ did, displayName, description }) {
    await agentOf(did).upsertProfile((old) => ({ ...(old ?? {}), displayName, description }));
    return {};
  },
  async deleteRecord({ did, uri }) {
    const [, , repo, collection, rkey] = uri.split('/');
    await agentOf(did).com.atproto.repo.deleteRecord({ repo, collection, rkey });
    return {};
  },
  async updateHandle({ did, handle }) {
    await agentOf(did).com.atproto.identity.updateHandle({ handle });
    accounts.get(did).handle = handle;
    return { handle };
  },
  async deactivate({ did }) {
    await agentOf(did).com.atproto.server.deactivateAccount({});
    return {};
  },
  async activate({ did }) {
    await agentOf(did).com.atproto.server.activateAccount();
    return {};
  },
  /** Deletes the account through the admin API (the email-token flow needs a mailer). */
  async deleteAccount({ did }) {
    const admin = new AtpAgent({ service: pds.url });
    await admin.com.atproto.admin.deleteAccount({ did }, { headers: pds.adminAuthHeaders(), encoding: 'application/json' });
    accounts.delete(did);
    return {};
  },
  /** The PDS's newest firehose seq (null before any event). */
  async head() {
    return { seq: await pds.ctx.sequencer.curr() };
  },
  /** How many subscribeRepos streams are attached to the PDS's sequencer right now. */
  async subscribers() {
    return { count: pds.ctx.sequencer.listenerCount('events') };
  },
  async close() {
    await network.close();
    setImmediate(() => process.exit(0));
    return {};
  },
};

const out = (obj) => process.stdout.write('@@ ' + JSON.stringify(obj) + '\n');
out({ ready: true, pdsUrl: pds.url, plcUrl: plc.url, pdsPort, plcPort, node: process.version });

// Commands run one at a time, in arrival order: the test's scenario depends on write order.
let chain = Promise.resolve();
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (!line.trim()) {
    return;
  }
  chain = chain.then(async () => {
    let cmd;
    try {
      cmd = JSON.parse(line);
      const fn = ops[cmd.op];
      if (!fn) {
        throw new Error(`unknown op ${cmd.op}`);
      }
      out({ id: cmd.id, ok: true, result: await fn(cmd) });
    } catch (e) {
      out({ id: cmd?.id ?? null, ok: false, error: String(e?.message ?? e) });
    }
  });
});
rl.on('close', async () => {
  // stdin closed: the test is gone, so is the network
  await chain;
  try {
    await network.close();
  } finally {
    process.exit(0);
  }
});
