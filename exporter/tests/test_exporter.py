"""rl-exporter against a real server with the module: exact counts, the
histogram, the top gauges, promtool, resets, lists, auth, TLS, a cluster."""

import math
import unittest

from harness import (REPO, Certs, Cluster, Exporter, RedisServer, promtool_check, sample, series, tls_supported,
                     parse_metrics)
import rl_exporter

H = "redis_rl_retry_after_seconds"


def traffic(server):
    """Known traffic; returns nothing, the tests know what it makes."""
    cmds = [
        ("RL.GCRA", "g", 1, 3600000),            # allowed
        ("RL.GCRA", "g", 1, 3600000),            # denied, retry ~1 h
        ("RL.GCRA", "g", 1, 3600000),            # denied, retry ~1 h
        ("RL.GCRA", "g", 1, 3600000, "PEEK"),    # denied (PEEK: INFO counts it, RL.TOP does not)
        ("RL.GCRA", "g2", 1, 1000, "COST", 2),   # never
        ("RL.GCRA", "g", "x", 1000),             # error
        ("RL.GCRA", "r", 10, 1000),              # allowed
        ("RL.GCRA", "r", 10, 1000, "REFUND", 1),  # allowed, a refund
        ("RL.TOKENBUCKET", "t", 1, 1, 50),        # allowed
        ("RL.TOKENBUCKET", "t", 1, 1, 50),        # denied, retry <= 50 ms (same pipeline: same ms)
        ("RL.SLIDE", "s", 1, 5000),               # allowed
        ("RL.SLIDE", "s", 1, 5000),               # denied, retry in (1 s, 5 s]? see below
        ("RL.ALL", 2, "a", "b", "GCRA", 1, 3600000, "SLIDE", 5, 1000),  # allowed
        ("RL.ALL", 2, "a", "b", "GCRA", 1, 3600000, "SLIDE", 5, 1000),  # denied once (by a), ~1 h
    ]
    return server.pipeline(cmds)


class Standalone(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = RedisServer(module_args=["top-sample", "1"])
        cls.replies = traffic(cls.server)
        cls.exporter = Exporter("--redis", cls.server.url, "--top", "3")
        cls.text, cls.m = cls.exporter.metrics()

    @classmethod
    def tearDownClass(cls):
        cls.exporter.stop()
        cls.server.stop()

    def test_counters_per_kind_are_info_rl_exactly(self):
        node = self.server.name
        want = {
            "gcra": dict(calls=8, allowed=3, denied=3, never=1, refunds=1, errors=1),
            "tokenbucket": dict(calls=2, allowed=1, denied=1, never=0, refunds=0, errors=0),
            "slide": dict(calls=2, allowed=1, denied=1, never=0, refunds=0, errors=0),
            "all": dict(calls=2, allowed=1, denied=1, never=0, refunds=0, errors=0),
            "log": dict(calls=0, allowed=0, denied=0, never=0, refunds=0, errors=0),
        }
        for kind, fields in want.items():
            for field, n in fields.items():
                self.assertEqual(sample(self.m, f"redis_rl_{field}_total", node=node, kind=kind), n, (kind, field))
        kinds = {l["kind"] for l, _ in series(self.m, "redis_rl_calls_total")}
        self.assertEqual(kinds, {"gcra", "tokenbucket", "slide", "log", "quota", "concurrency", "all",
                                 "throttle", "release", "renew"})
        self.assertEqual(sample(self.m, "redis_rl_up", node=node), 1)
        self.assertEqual(sample(self.m, "redis_rl_keys_created_total", node=node), 6)  # g r t s a b

    def test_retry_after_is_a_cumulative_histogram_in_seconds_with_never_apart(self):
        node = self.server.name
        slide_retry = self.replies[11][3]
        tb_retry = self.replies[9][3]
        self.assertTrue(10 < tb_retry <= 50, tb_retry)
        # Non-cumulative, as INFO rl has them: 1 token bucket, 1 slide, 4 near an hour.
        raw = {0.01: 0, 0.1: 1, 1.0: 0, 10.0: 0, 60.0: 0, 3600.0: 4}
        slide_bound = min(b for b in raw if slide_retry / 1000 <= b)
        raw[slide_bound] += 1
        running, want = 0, {}
        for bound in sorted(raw):
            running += raw[bound]
            want[rl_exporter.fmt_le(bound)] = running
        want["+Inf"] = running
        got = {l["le"]: v for l, v in series(self.m, H + "_bucket", node=node)}
        self.assertEqual(got, want)
        self.assertEqual(sample(self.m, H + "_count", node=node), 6)
        # The module sums the retries (rl_retry_after_cumulative's sum_ms):
        # _sum is exactly the denials' retry_after_ms, in seconds.
        retries = [self.replies[i][3] for i in (1, 2, 3, 9, 11)] + [self.replies[13][1]]
        self.assertAlmostEqual(sample(self.m, H + "_sum", node=node), sum(retries) / 1000, places=6)
        self.assertEqual(sample(self.m, "redis_rl_retry_after_never_total", node=node), 1)
        # The buckets add up to every denied (not never) of every line.
        denied = sum(v for _, v in series(self.m, "redis_rl_denied_total", node=node))
        self.assertEqual(denied, 6)

    def test_top_gauges_are_bounded_and_ranked(self):
        node = self.server.name
        denied = sorted(((l["key"], v) for l, v in series(self.m, "redis_rl_top_denied_calls")),
                        key=lambda kv: (-kv[1], kv[0]))
        # g 2 (PEEK not counted), then a, g2, s, t once each: the top 3, ties by key.
        self.assertEqual(denied, [("g", 2), ("a", 1), ("g2", 1)])
        self.assertEqual(sample(self.m, "redis_rl_top_denied_calls_error", node=node, key="g"), 0)
        self.assertEqual(sample(self.m, "redis_rl_top_denied_tracked_calls", node=node), 6)
        consumed = {l["key"]: v for l, v in series(self.m, "redis_rl_top_consumed_units")}
        self.assertEqual(len(consumed), 3)
        tracked = sample(self.m, "redis_rl_top_consumed_tracked_units", node=node)
        rows = self.server.call("RL.TOP", "CONSUMED", "COUNT", 100)
        self.assertEqual(tracked, sum(int(c) for _, c, _ in rows))

    def test_module_info_and_health(self):
        node = self.server.name
        info = series(self.m, "redis_rl_module_info", node=node)
        self.assertEqual(len(info), 1)
        version = rl_exporter.parse_info(self.server.call("INFO", "rl").decode())
        self.assertEqual(info[0][0]["version"], version["rl_version"])
        self.assertEqual(info[0][0]["tzdata"], version["rl_tzdata"])
        self.assertRegex(info[0][0]["tzdata"], r"^\d{4}[a-z]$")
        self.assertEqual(sample(self.m, "redis_rl_scrape_errors_total", node=node), 0)
        self.assertGreater(sample(self.m, "redis_rl_scrape_duration_seconds", node=node), 0)
        self.assertEqual(sample(self.m, "redis_rl_exporter_nodes"), 1)

    def test_promtool_check_metrics_passes(self):
        ok, out = promtool_check(self.text)
        self.assertTrue(ok, out)
        self.assertEqual(out, "", "promtool lint findings")


class Waits(unittest.TestCase):
    def test_rl_wait_counters_and_the_waiting_gauge(self):
        server = RedisServer()
        self.addCleanup(server.stop)
        server.call("RL.ACQUIRE", "w", 1, 60000)
        # Blocks; its 50 ms timeout passes (real time, bounded by the server).
        server.call("RL.ACQUIRE", "w", 1, 60000, "WAIT", 50)
        exporter = Exporter("--redis", server.url)
        self.addCleanup(exporter.stop)
        text, m = exporter.metrics()
        node = server.name
        self.assertEqual(sample(m, "redis_rl_waits_total", node=node), 1)
        self.assertEqual(sample(m, "redis_rl_wait_timeouts_total", node=node), 1)
        self.assertEqual(sample(m, "redis_rl_wait_grants_total", node=node), 0)
        self.assertEqual(sample(m, "redis_rl_waiting_clients", node=node), 0)
        ok, out = promtool_check(text)
        self.assertTrue(ok, out)


class Resets(unittest.TestCase):
    """RL.TOP RESET leaves the counters alone (the top gauges restart);
    a server restart starts every counter from 0, which Prometheus's rate()
    reads as a counter reset; a node down is up 0 and a scrape error."""

    def test_rl_top_reset_and_restart(self):
        s = RedisServer()
        e = Exporter("--redis", s.url)
        try:
            s.pipeline([("RL.GCRA", "k", 1, 3600000)] * 5)
            _, before = e.metrics()
            self.assertEqual(sample(before, "redis_rl_denied_total", node=s.name, kind="gcra"), 4)
            self.assertEqual(sample(before, "redis_rl_top_denied_calls", node=s.name, key="k"), 4)
            self.assertEqual(s.call("RL.TOP", "RESET"), b"OK")
            self.assertEqual(s.call("CONFIG", "RESETSTAT"), b"OK")  # leaves INFO rl alone, as documented
            s.pipeline([("RL.GCRA", "k", 1, 3600000)] * 2)
            _, after = e.metrics()
            self.assertEqual(sample(after, "redis_rl_denied_total", node=s.name, kind="gcra"), 6)
            self.assertEqual(sample(after, "redis_rl_top_denied_calls", node=s.name, key="k"), 2)
            self.assertEqual(sample(after, "redis_rl_top_denied_tracked_calls", node=s.name), 2)
            start = sample(after, "redis_rl_server_start_time_seconds", node=s.name)

            s.kill()
            text, down = e.metrics()
            self.assertEqual(sample(down, "redis_rl_up", node=s.name), 0)
            self.assertEqual(sample(down, "redis_rl_scrape_errors_total", node=s.name), 1)
            self.assertIsNone(sample(down, "redis_rl_denied_total", node=s.name, kind="gcra"))
            self.assertTrue(promtool_check(text)[0])

            s.start()
            s.pipeline([("RL.GCRA", "k", 1, 3600000)] * 3)
            _, back = e.metrics()
            self.assertEqual(sample(back, "redis_rl_up", node=s.name), 1)
            self.assertEqual(sample(back, "redis_rl_denied_total", node=s.name, kind="gcra"), 2)
            self.assertEqual(sample(back, "redis_rl_scrape_errors_total", node=s.name), 1)
            self.assertGreaterEqual(sample(back, "redis_rl_server_start_time_seconds", node=s.name), start)
        finally:
            e.stop()
            s.stop()


class Lists(unittest.TestCase):
    def test_a_list_of_servers_with_auth_and_redaction(self):
        a = RedisServer(password="pw-a")
        b = RedisServer(users=["scraper on >pw-b ~* &* +@all", "default off"], login=("scraper", "pw-b"))
        down = RedisServer()
        down.kill()
        long_key = "tenant:acme:user:" + "x" * 30
        a.pipeline([("RL.GCRA", long_key, 1, 3600000)] * 4)
        b.pipeline([("RL.GCRA", "ip:203.0.113.9", 1, 3600000)] * 3)
        flags = ["--redis", f"redis://:pw-a@127.0.0.1:{a.port}", "--redis", f"redis://scraper:pw-b@127.0.0.1:{b.port}",
                 "--redis", down.url]
        try:
            e = Exporter(*flags, "--truncate-keys", "12")
            try:
                text, m = e.metrics()
                self.assertEqual(sample(m, "redis_rl_up", node=a.name), 1)
                self.assertEqual(sample(m, "redis_rl_up", node=b.name), 1)
                self.assertEqual(sample(m, "redis_rl_up", node=down.name), 0)
                self.assertEqual(sample(m, "redis_rl_exporter_nodes"), 3)
                top = {(l["node"], l["key"]): v for l, v in series(m, "redis_rl_top_denied_calls")}
                self.assertEqual(top, {(a.name, "tenant:acme:..."): 3, (b.name, "ip:203.0.113..."): 2})
                self.assertTrue(promtool_check(text)[0])
            finally:
                e.stop()
            e = Exporter(*flags, "--hash-keys", "--hash-salt", "s3cret")
            try:
                text, m = e.metrics()
                keys = [l["key"] for l, _ in series(m, "redis_rl_top_denied_calls")]
                self.assertEqual(len(keys), 2)
                self.assertTrue(all(k.startswith("h:") and len(k) == 18 for k in keys), keys)
                self.assertNotIn("203.0.113", text)
                self.assertNotIn("acme", text)
                self.assertNotIn("203.0.113", e.get("/api/live"))
                want = rl_exporter.Redactor(True, "s3cret")("ip:203.0.113.9")
                self.assertIn(want, keys)
            finally:
                e.stop()
            # Flags give what the URL leaves out.
            e = Exporter("--redis", b.url, "--user", "scraper", "--password", "pw-b")
            try:
                _, m = e.metrics()
                self.assertEqual(sample(m, "redis_rl_up", node=b.name), 1)
            finally:
                e.stop()
            # A wrong password is a scrape error, not a crash.
            e = Exporter("--redis", f"redis://:wrong@127.0.0.1:{a.port}")
            try:
                _, m = e.metrics()
                self.assertEqual(sample(m, "redis_rl_up", node=a.name), 0)
                self.assertEqual(sample(m, "redis_rl_scrape_errors_total", node=a.name), 1)
            finally:
                e.stop()
        finally:
            for s in (a, b, down):
                s.stop()

    def test_the_least_privileged_user_of_the_docs_is_enough(self):
        s = RedisServer()
        try:
            acl = "exporter on >pw -@all +info +rl.top|denied +rl.top|consumed +cluster|nodes"
            self.assertEqual(s.call("ACL", "SETUSER", *acl.split()), b"OK")
            self.assertIn(f"ACL SETUSER {acl}", (REPO / "docs/observability.md").read_text())
            s.pipeline([("RL.GCRA", "k", 1, 3600000)] * 3)
            e = Exporter("--redis", f"redis://exporter:pw@127.0.0.1:{s.port}")
            try:
                _, m = e.metrics()
                self.assertEqual(sample(m, "redis_rl_up", node=s.name), 1)
                self.assertEqual(sample(m, "redis_rl_top_denied_calls", node=s.name, key="k"), 2)
                self.assertEqual(sample(m, "redis_rl_denied_total", node=s.name, kind="gcra"), 2)
            finally:
                e.stop()
        finally:
            s.stop()

    def test_top_capacity_below_the_fetch_and_rl_top_off(self):
        small = RedisServer(module_args=["top-capacity", "5"])
        off = RedisServer(module_args=["top-capacity", "0"])
        try:
            small.pipeline([("RL.GCRA", f"k{i}", 1, 1000, "COST", 2) for i in range(8)])
            off.pipeline([("RL.GCRA", "k", 1, 1000, "COST", 2)])
            e = Exporter("--redis", small.url, "--redis", off.url, "--top", "20")
            try:
                text, m = e.metrics()
                self.assertEqual(len(series(m, "redis_rl_top_denied_calls", node=small.name)), 5)
                # A full summary of 5 read whole: its counts add up to the 8 denials.
                self.assertEqual(sample(m, "redis_rl_top_denied_tracked_calls", node=small.name), 8)
                self.assertEqual(sample(m, "redis_rl_up", node=off.name), 1)
                self.assertEqual(sample(m, "redis_rl_never_total", node=off.name, kind="gcra"), 1)
                self.assertEqual(series(m, "redis_rl_top_denied_calls", node=off.name), [])
                self.assertTrue(promtool_check(text)[0])
            finally:
                e.stop()
        finally:
            small.stop()
            off.stop()


@unittest.skipUnless(tls_supported(), "this server was built without TLS")
class Tls(unittest.TestCase):
    def test_rediss_with_a_ca_and_a_password(self):
        certs = Certs()
        s = RedisServer(tls=certs, password="pw")
        try:
            s.pipeline([("RL.GCRA", "k", 1, 3600000)] * 3)
            e = Exporter("--redis", f"rediss://:pw@127.0.0.1:{s.port}", "--tls-ca-cert", certs.cert)
            try:
                _, m = e.metrics()
                self.assertEqual(sample(m, "redis_rl_up", node=s.name), 1)
                self.assertEqual(sample(m, "redis_rl_denied_total", node=s.name, kind="gcra"), 2)
            finally:
                e.stop()
            # Without the CA the certificate is not trusted: up 0.
            e = Exporter("--redis", f"rediss://:pw@127.0.0.1:{s.port}")
            try:
                _, m = e.metrics()
                self.assertEqual(sample(m, "redis_rl_up", node=s.name), 0)
            finally:
                e.stop()
        finally:
            s.stop()


class ClusterDiscovery(unittest.TestCase):
    def test_every_master_from_any_node_with_credentials(self):
        tls = Certs() if tls_supported() else None
        c = Cluster(password="cpw", tls=tls)
        try:
            keys = [f"user:{i}" for i in range(60)]
            for k in keys:
                c.owner(k).pipeline([("RL.GCRA", k, 1, 3600000)] * 2)
            flags = ["--cluster", "--redis", f"{c.nodes[1].url.replace('://', '://:cpw@')}"]
            if tls:
                flags += ["--tls-ca-cert", tls.cert]
            e = Exporter(*flags)
            try:
                text, m = e.metrics()
                self.assertEqual(sample(m, "redis_rl_exporter_nodes"), 3)
                for n in c.nodes:
                    self.assertEqual(sample(m, "redis_rl_up", node=n.name), 1, n.name)
                    mine = sum(1 for k in keys if c.owner(k) is n)
                    self.assertGreater(mine, 0)
                    self.assertEqual(sample(m, "redis_rl_denied_total", node=n.name, kind="gcra"), mine)
                self.assertTrue(promtool_check(text)[0])
            finally:
                e.stop()
        finally:
            c.stop()


class LiveApi(unittest.TestCase):
    def test_rates_shares_and_the_page_has_no_external_assets(self):
        import json
        import re
        s = RedisServer()
        try:
            s.pipeline([("RL.GCRA", "noisy", 1, 3600000)] * 11 + [("RL.GCRA", "other", 1, 3600000)] * 11)
            e = Exporter("--redis", s.url, "--rate-window", "0")
            try:
                first = json.loads(e.get("/api/live"))
                self.assertIsNone(first["denials_per_second"])  # one scrape: no rate yet
                s.pipeline([("RL.GCRA", "noisy", 1, 3600000)] * 50)
                import time
                time.sleep(0.6)  # past the page's 0.5 s scrape cache
                live = json.loads(e.get("/api/live"))
                w = live["window_seconds"]
                self.assertGreater(w, 0)
                self.assertAlmostEqual(live["denials_per_second"] * w, 50, delta=0.1)
                self.assertAlmostEqual(live["denials_per_second_by_kind"]["gcra"] * w, 50, delta=0.1)
                self.assertEqual(live["denials_total"], 70)
                rows = live["top_denied"]["rows"]
                self.assertEqual([(r["key"], r["count"]) for r in rows], [("noisy", 60), ("other", 10)])
                self.assertAlmostEqual(rows[0]["share"], 60 / 70)
                self.assertAlmostEqual(rows[0]["per_second"] * w, 50, delta=0.1)
                self.assertEqual(rows[1]["per_second"], 0.0)
                self.assertEqual(live["top_denied"]["tracked"], 70)
                hist = {b["le"]: b for b in live["retry_after"]["buckets"]}
                self.assertEqual((hist["1h"]["count"], hist["1h"]["recent"]), (70, 50))
                page = e.get("/")
                self.assertIn("api/live", page)
                # Nothing fetched from elsewhere: no URL with a scheme or //host in src/href/url().
                self.assertEqual(re.findall(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//|url\(\s*["\']?(?:https?:)?//', page), [])
                self.assertNotIn("<link", page)
            finally:
                e.stop()
        finally:
            s.stop()


class Units(unittest.TestCase):
    def test_cumulative_fields_are_used_when_the_module_has_them(self):
        info = rl_exporter.parse_info(
            "rl_retry_after:le_10ms=1,le_100ms=2,le_1s=0,le_10s=0,le_1min=0,le_1h=0,longer=1,never=3\n"
            "rl_retry_after_cumulative:le_10ms=1,le_100ms=3,le_1s=3,le_10s=3,le_1min=3,le_1h=3,le_inf=4,"
            "sum_ms=9000,never=3\n")
        buckets, total, never = rl_exporter.retry_histogram(info)
        self.assertEqual(buckets[-1], (math.inf, 4))
        self.assertEqual(buckets[1], (0.1, 3))
        self.assertEqual((total, never), (9.0, 3))
        old = rl_exporter.retry_histogram({k: v for k, v in info.items() if k == "rl_retry_after"})
        self.assertEqual(old[0], buckets)
        self.assertIsNone(old[1])

    def test_label_values_are_escaped(self):
        m = rl_exporter.Metrics()
        m.family("x", "gauge", "h")
        m.add("x", {"key": 'a"b\\c\nd'}, 1)
        text = m.text()
        self.assertIn('x{key="a\\"b\\\\c\\nd"} 1', text)
        self.assertEqual(parse_metrics(text)[("x", frozenset({("key", 'a"b\\c\nd')}))], 1)


if __name__ == "__main__":
    unittest.main()
