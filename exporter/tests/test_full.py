"""End to end, once (RL_EXPORTER_FULL=1): a 3-master cluster under generated
traffic, rl-exporter --cluster, a real Prometheus scraping it every second,
PromQL through its HTTP API, every query of the Grafana dashboard, and the
live page in headless Chromium.

The timeline: traffic (phase A); rate, quantile and live-page checks in the
middle of it; RL.TOP RESET on every master; more traffic; one master
restarted (its INFO rl counters start again from 0); more traffic; stop;
then what Prometheus holds is compared with what the generator saw, reply by
reply: exact totals, and rates within the tolerance of rate()'s
extrapolation.
"""

import bisect
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

from harness import REPO, Cluster, Exporter, Generator, Prometheus, rl_exporter, wait_until

FULL = os.environ.get("RL_EXPORTER_FULL") == "1"
DASHBOARD = REPO / "docs/grafana/redis-rl.json"
BOUNDS = [0.01, 0.1, 1.0, 10.0, 60.0, 3600.0, math.inf]


def quantile(q, counts):
    """Prometheus's histogram_quantile over cumulative [(le, count)]."""
    total = counts[-1][1]
    rank = q * total
    i = bisect.bisect_left([c for _, c in counts], rank)
    if counts[i][0] == math.inf:
        return counts[-2][0]
    lo, below = (0.0, 0) if i == 0 else (counts[i - 1][0], counts[i - 1][1])
    return lo + (counts[i][0] - lo) * (rank - below) / (counts[i][1] - below)


def cumulative(retries):
    """Cumulative buckets (seconds) of retry_after_ms values (never apart)."""
    out = []
    for b in BOUNDS:
        out.append((b, sum(1 for r in retries if r >= 0 and r / 1000 <= b)))
    return out


def chromium(*args, timeout=90):
    profile = tempfile.mkdtemp(prefix="rl-exporter-chromium-")
    try:
        argv = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def dashboard_exprs():
    """Every PromQL expr in the dashboard (rows' nested panels too)."""
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append((p["title"], t["expr"]))
            walk(p.get("panels", []))

    walk(json.loads(DASHBOARD.read_text())["panels"])
    return out


@unittest.skipUnless(FULL, "RL_EXPORTER_FULL=1 runs the cluster + Prometheus + Chromium test (once, not per server)")
class EndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = Cluster()
        cls.exporter = cls.prometheus = cls.gen = None
        try:
            cls.exporter = Exporter("--cluster", "--redis", cls.cluster.nodes[1].url, "--top", "5")
            cls.prometheus = Prometheus([f"127.0.0.1:{cls.exporter.port}"])
            # Prometheus applies its targets up to 5 s after it is ready.
            wait_until("Prometheus's first scrape of every node",
                       lambda: len(cls.prometheus.query("redis_rl_up == 1")["result"]) == 3, timeout=30, interval=0.2)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for thing in (cls.gen, cls.prometheus, cls.exporter, cls.cluster):
            if thing is not None:
                thing.stop()

    def q(self, expr, at=None):
        return self.prometheus.query(expr, at)["result"]

    def wait_scraped_after(self, t):
        """Until Prometheus holds a scrape of every node taken after wall time t."""
        def done():
            r = self.q("min(timestamp(redis_rl_up))")
            return r and float(r[0]["value"][1]) > t + 0.2 and len(self.q("redis_rl_up == 1")) == 3
        wait_until(f"a scrape after {t}", done, timeout=20, interval=0.2)

    def test_end_to_end(self):
        c = self.cluster
        nodes = {n.name: n for n in c.nodes}
        noisy_owner = c.owner("noisy")
        users = [f"user:{i}" for i in range(12)]
        restarted = next(c.owner(u) for u in users if c.owner(u) is not noisy_owner)
        commands = [("gcra", ("RL.GCRA", "noisy", 1, 3600000))] * 10
        commands += [("slide", ("RL.SLIDE", u, 1, 5000)) for u in users]
        commands += [("tokenbucket", ("RL.TOKENBUCKET", f"tb:{i}", 5, 1, 100)) for i in range(6)] * 3
        commands += [("gcra", ("RL.GCRA", f"big:{i}", 1, 1000, "COST", 2)) for i in range(2)]
        self.__class__.gen = gen = Generator(c, commands, tick=0.1)
        gen.start()

        # Phase A: 10 s of traffic, then rates and quantiles over its last 8 s.
        time.sleep(10)
        t_mid = time.time()
        self.wait_scraped_after(t_mid + 1)
        window = 8
        by_kind = {r["metric"]["kind"]: float(r["value"][1])
                   for r in self.q(f"sum by (kind) (rate(redis_rl_denied_total[{window}s]))", t_mid)}
        for kind in ("gcra", "slide", "tokenbucket"):
            seen = [e for e in gen.denials(t_mid - window, t_mid, kind=kind) if e[4] >= 0]
            want = len(seen) / window
            self.assertGreater(want, 5, kind)
            self.assertLess(abs(by_kind[kind] - want) / want, 0.25, f"{kind}: Prometheus {by_kind[kind]}, traffic {want}")
        for kind in ("log", "quota", "concurrency", "all", "throttle"):
            self.assertEqual(by_kind.get(kind), 0.0, kind)
        never = float(self.q(f"sum(rate(redis_rl_never_total[{window}s]))", t_mid)[0]["value"][1])
        self.assertLess(abs(never - 20) / 20, 0.25, never)  # 2 per tick

        q90 = float(self.q(f"histogram_quantile(0.9, sum by (le) (rate(redis_rl_retry_after_seconds_bucket[{window}s])))",
                           t_mid)[0]["value"][1])
        recent = [e[4] for e in gen.denials(t_mid - window, t_mid)]
        want = quantile(0.9, cumulative(recent))
        self.assertTrue(60 < want <= 3600, want)  # the noisy key's hour: the top tenth of retries
        self.assertLess(abs(q90 - want) / want, 0.15, f"Prometheus p90 {q90}, traffic {want}")

        top = self.q("topk(1, sum by (key) (redis_rl_top_denied_calls))", t_mid)
        self.assertEqual(top[0]["metric"]["key"], "noisy", top)
        order = [r["metric"]["key"] for r in self.q("sort_desc(sum by (key) (redis_rl_top_denied_calls))", t_mid)]
        self.assertEqual(order[0], "noisy", order)
        self.assertLessEqual(len(order), 5)  # --top 5 over all nodes

        # The live page, under traffic, in a real browser.
        self.live_page()

        # RL.TOP RESET on every master: the top gauges start again, the
        # counters do not (no reset in Prometheus's sense).
        t_reset = time.time()
        for n in c.nodes:
            self.assertEqual(n.call("RL.TOP", "RESET"), b"OK")
        time.sleep(3)
        self.wait_scraped_after(time.time())
        before = float(self.q("sum(redis_rl_top_denied_tracked_calls)", t_reset - 0.05)[0]["value"][1])
        after = float(self.q("sum(redis_rl_top_denied_tracked_calls)", t_reset + 2.5)[0]["value"][1])
        self.assertLess(after, before / 2, (before, after))

        # A restart: pause the traffic, restart one master, wait for it to
        # rejoin, go on. Its counters start from 0.
        gen.pause()  # returns between ticks: nothing in flight
        t_restart = time.time()
        restarted.restart()
        wait_until("the restarted master back in an ok cluster",
                   lambda: rl_exporter.parse_info(restarted.call("CLUSTER", "INFO").decode())
                   .get("cluster_state") == "ok", timeout=30, interval=0.1)
        gen.resume()
        time.sleep(6)
        gen.stop()
        t_end = time.time()
        self.wait_scraped_after(t_end + 0.5)
        at = t_end + 1.5
        self.wait_scraped_after(at)

        # Exact totals: every denial the generator saw, less those the
        # restarted node forgot.
        def expected(kind=None, node=None):
            n = 0
            for e in gen.denials(kind=kind) if kind else gen.denials():
                if node is not None and e[3] != node:
                    continue
                if e[3] == restarted.name and e[1] < t_restart:
                    continue
                if e[4] >= 0:
                    n += 1
            return n

        got = {(r["metric"]["kind"], r["metric"]["node"]): int(float(r["value"][1]))
               for r in self.q("redis_rl_denied_total", at)}
        for kind in ("gcra", "slide", "tokenbucket"):
            for name in nodes:
                self.assertEqual(got.get((kind, name), 0), expected(kind, name), (kind, name))
        # The exact p90 of everything the servers still count.
        kept = [e[4] for e in gen.denials() if not (e[3] == restarted.name and e[1] < t_restart)]
        q90 = float(self.q("histogram_quantile(0.9, sum by (le) (redis_rl_retry_after_seconds_bucket))", at)[0]["value"][1])
        self.assertAlmostEqual(q90, quantile(0.9, cumulative(kept)), places=6)
        count = float(self.q("sum(redis_rl_retry_after_seconds_count)", at)[0]["value"][1])
        self.assertEqual(count, sum(1 for r in kept if r >= 0))

        # The restart is a counter reset to Prometheus, on that node only;
        # increase() across it still adds up to the traffic.
        resets = {r["metric"]["node"]: float(r["value"][1])
                  for r in self.q('resets(redis_rl_calls_total{kind="slide"}[2m])', at)}
        self.assertGreaterEqual(resets[restarted.name], 1)
        self.assertEqual({k: v for k, v in resets.items() if k != restarted.name}, dict.fromkeys(
            [n for n in nodes if n != restarted.name], 0.0))
        span = at - t_reset + 1
        inc = float(self.q(f'sum(increase(redis_rl_denied_total{{kind="slide"}}[{span:.0f}s]))', at)[0]["value"][1])
        want = sum(1 for e in gen.denials(at - span, at, kind="slide") if e[4] >= 0)
        self.assertLess(abs(inc - want) / want, 0.3, (inc, want))

        # Every query of the Grafana dashboard parses and returns data.
        self.dashboard(at)

    def dashboard(self, at):
        exprs = dashboard_exprs()
        self.assertGreaterEqual(len(exprs), 20)
        values = {"$__rate_interval": "10s", "$__range": "1m", "$__interval": "1s", "$node": ".*", "$job": ".*"}
        for title, expr in exprs:
            e = expr
            for k, v in values.items():
                e = e.replace(k, v)
            self.assertNotIn("$", e, f"{title}: an unknown variable in {expr}")
            with self.subTest(panel=title, expr=expr):
                result = self.q(e, at)
                self.assertTrue(result, f"{title}: no data for {e}")
        dash = json.loads(DASHBOARD.read_text())
        for var in dash["templating"]["list"]:
            m = re.fullmatch(r"label_values\((\w+), (\w+)\)", var.get("definition", ""))
            if m:
                self.assertTrue(any(m.group(2) in r["metric"] for r in self.q(m.group(1), at)), var["name"])

    def live_page(self):
        url = self.exporter.url + "/"
        out = chromium("--virtual-time-budget=9000", "--dump-dom", url)
        self.assertEqual(out.returncode, 0, out.stderr[-2000:])
        dom = out.stdout
        ready = re.search(r'<body[^>]*data-ready="(\d+)"', dom)
        self.assertTrue(ready and int(ready.group(1)) >= 2, dom[:500])  # drawn at least twice: rates shown
        rows = re.findall(r'<tr data-key="([^"]*)"', dom.split('id="consumed"')[0])
        self.assertEqual(rows[0], "noisy", rows)
        rate = re.search(r'id="rate">([^<]*)<', dom).group(1)
        self.assertRegex(rate, r"^[\d,]+(\.\d)?$")
        self.assertGreater(float(rate.replace(",", "")), 50)
        self.assertIn("≤1h", dom)
        shot = os.environ.get("RL_EXPORTER_SCREENSHOT") or os.path.join(self.exporter.dir, "live-page.png")
        out = chromium("--virtual-time-budget=9000", "--window-size=1280,590", "--hide-scrollbars",
                       f"--screenshot={os.path.abspath(shot)}", url)
        self.assertEqual(out.returncode, 0, out.stderr[-2000:])
        self.assertGreater(os.path.getsize(shot), 10000)


class DashboardFile(unittest.TestCase):
    """Without Prometheus: the dashboard is valid JSON whose queries use only
    the exporter's metric names (so a rename cannot leave it behind)."""

    def test_every_metric_it_queries_is_exported(self):
        text = (REPO / "exporter/rl_exporter.py").read_text()
        names = set(re.findall(r'"(redis_rl_[a-z_]+)"', text)) | set(re.findall(r'f"(redis_rl_[a-z_{}]+)"', text))
        exported = set()
        for n in names:
            if "{" in n:
                for c in ["calls", "allowed", "denied", "never", "refunds", "errors"]:
                    exported.add(n.replace("{c}", c))
                for b, u in (("denied", "calls"), ("consumed", "units"), ("{board}", "{unit}")):
                    exported.add(n.replace("{board}", b).replace("{unit}", u))
                for f in ["effects_propagated", "keys_created", "repairs", "panics"]:
                    exported.add(n.replace("{field}", f))
            else:
                exported.add(n)
        exported |= {f"redis_rl_top_{b}_{u}{s}" for b, u in (("denied", "calls"), ("consumed", "units"))
                     for s in ("", "_error")}
        exported |= {"redis_rl_retry_after_seconds_bucket", "redis_rl_retry_after_seconds_count"}
        for title, expr in dashboard_exprs():
            for metric in re.findall(r"\b(redis_rl_[a-z_]+)", expr):
                self.assertIn(metric, exported, f"{title}: {expr}")


if __name__ == "__main__":
    unittest.main()
