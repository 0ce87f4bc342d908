'use strict';
// Express and Fastify: check the route's limits before the handler runs.
//
// key(req) must return a TRUSTED identity: the authenticated user, API key id
// or tenant your auth layer set, or the peer address as your framework sees it
// with its proxy trust configured (Express "trust proxy", Fastify
// "trustProxy"). Never a raw X-Forwarded-For header or a parameter the client
// chose: a client would then pick whose limit is charged. Return null to let
// a request through unlimited (health checks).

function normalize(limiter, opts) {
  if (!limiter || typeof limiter.check !== 'function') throw new TypeError('a Limiter is required');
  const { limits, key, cost = 1, tag, headers = true } = opts || {};
  const list = Array.isArray(limits) ? limits : limits ? [limits] : [];
  if (!list.length) throw new TypeError('limits: one limit or an array of limits is required');
  if (typeof key !== 'function') throw new TypeError('key: a function (req) => trusted identity is required');
  const costOf = typeof cost === 'function' ? cost : () => cost;
  const tagOf = typeof tag === 'function' ? tag : () => tag;
  return async (req) => {
    const identity = await key(req);
    if (identity === null || identity === undefined) return null;
    const c = await costOf(req);
    if (list.length === 1) return limiter.check(list[0], identity, { cost: c });
    return limiter.checkAll(list.map((l) => [l, identity]), { cost: c, tag: tagOf(req, identity) });
  };
}

// app.use(expressRateLimit(limiter, {limits, key, cost, tag})) or per route:
// app.get('/x', expressRateLimit(...), handler). Sets the RateLimit fields on
// every response it limits; a denial answers decision.status with
// decision.body() as JSON and the handler never runs. req.rateLimit holds
// the Decision.
function expressRateLimit(limiter, opts) {
  const decide = normalize(limiter, opts);
  const sendHeaders = opts.headers !== false;
  return function redisRlExpress(req, res, next) {
    decide(req).then((d) => {
      if (!d) return next();
      try {
        req.rateLimit = d;
        if (sendHeaders || !d.allowed) {
          const h = d.headers();
          for (const k of Object.keys(h)) res.setHeader(k, h[k]);
        }
        if (!d.allowed) {
          res.status(d.status).json(d.body());
          return undefined;
        }
      } catch (err) {
        return next(err);
      }
      return next();
    }, next);
  };
}

// fastify.addHook('onRequest', fastifyRateLimit(limiter, {...})) or per
// route: {onRequest: fastifyRateLimit(...)}. request.rateLimit holds the Decision.
function fastifyRateLimit(limiter, opts) {
  const decide = normalize(limiter, opts);
  const sendHeaders = opts.headers !== false;
  return async function redisRlFastify(request, reply) {
    const d = await decide(request);
    if (!d) return;
    request.rateLimit = d;
    if (sendHeaders || !d.allowed) reply.headers(d.headers());
    if (!d.allowed) {
      reply.code(d.status).send(d.body());
      return reply;
    }
  };
}

module.exports = { expressRateLimit, fastifyRateLimit };
