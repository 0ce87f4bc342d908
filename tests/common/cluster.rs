//! A real Redis Cluster on loopback: three masters with one replica each,
//! the module loaded on every node, the real clock (cluster failure
//! detection and failover run on it, so it cannot be frozen).
//!
//! Formed by hand rather than with `redis-cli --cluster create`, which is
//! slower (it sleeps between its checks) and pairs replicas with masters
//! as it likes: here node `i + 3` replicates node `i`, and master `i` owns
//! the `i`-th third of the slots. Every wait is bounded and polls; the
//! servers are killed when the [`Cluster`] is dropped (see [`Server`]).

use std::thread;
use std::time::{Duration, Instant};

use redis::cluster::{ClusterClient, ClusterConnection};
use redis::Connection;

use super::{free_port, Server, ServerOptions};

pub const MASTERS: usize = 3;
pub const SLOTS: u16 = 16384;
/// Long enough for a loaded test machine to form a cluster or fail over.
const DEADLINE: Duration = Duration::from_secs(30);

/// The hash slot of a key (honours `{hash tags}`), as client and server compute it.
pub fn slot_of(key: &str) -> u16 {
    redis::cluster_routing::get_slot(key.as_bytes())
}

pub struct Cluster {
    /// Nodes `0..MASTERS` start as masters, node `i + MASTERS` as the replica of node `i`.
    pub nodes: Vec<Server>,
    /// Each node's cluster id, in the same order.
    pub ids: Vec<String>,
}

impl Cluster {
    /// Starts and forms the cluster; returns once every node reports
    /// `cluster_state:ok`, agrees on who serves every slot, and every replica
    /// is in sync with its master.
    pub fn start() -> Cluster {
        let nodes: Vec<Server> = (0..2 * MASTERS)
            .map(|_| {
                // Redis's default bus port is port + 10000, which overflows
                // for high ephemeral ports: give it its own free port.
                let bus = free_port().to_string();
                #[rustfmt::skip]
                let extra_args = [
                    "--cluster-enabled", "yes",
                    "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", "2000",
                    "--cluster-port", &bus,
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                Server::start_with(ServerOptions { extra_args, ..Default::default() })
            })
            .collect();
        let mut conns: Vec<Connection> = nodes.iter().map(Server::conn).collect();
        let ids: Vec<String> = conns.iter_mut().map(|c| cmd(c, &["CLUSTER", "MYID"])).collect();
        let cluster = Cluster { nodes, ids };

        for (i, c) in conns.iter_mut().enumerate().take(MASTERS) {
            let (first, last) = Cluster::initial_range(i);
            let _: String = cmd(c, &["CLUSTER", "ADDSLOTSRANGE", &first.to_string(), &last.to_string()]);
            // Distinct epochs from the start, as `redis-cli --cluster create`
            // does, so no epoch collision has to be resolved first.
            let _: String = cmd(c, &["CLUSTER", "SET-CONFIG-EPOCH", &(i + 1).to_string()]);
        }
        // Node 0 meets everyone; gossip introduces the rest to each other.
        let (first, rest) = conns.split_at_mut(1);
        for (node, con) in cluster.nodes[1..].iter().zip(rest) {
            let bus = config_get(con, "cluster-port");
            let _: String = cmd(&mut first[0], &["CLUSTER", "MEET", "127.0.0.1", &node.port.to_string(), &bus]);
        }
        cluster.wait_until("every node knows every other node", |c| {
            c.nodes.iter().all(|n| {
                let lines: String = cmd(&mut n.conn(), &["CLUSTER", "NODES"]);
                lines.lines().count() == 2 * MASTERS && !lines.contains("handshake") && !lines.contains("noaddr")
            })
        });
        for i in 0..MASTERS {
            let master = cluster.ids[i].clone();
            let _: String = cmd(&mut conns[i + MASTERS], &["CLUSTER", "REPLICATE", &master]);
        }
        cluster.wait_until_settled();
        cluster
    }

    /// The slots master `i` owns at start.
    pub fn initial_range(i: usize) -> (u16, u16) {
        let per = SLOTS as usize / MASTERS;
        let first = i * per;
        let last = if i + 1 == MASTERS { SLOTS as usize - 1 } else { first + per - 1 };
        (first as u16, last as u16)
    }

    /// Seed URLs for a cluster client.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Server::url).collect()
    }

    /// A cluster-aware connection: routes by key, follows MOVED and ASK.
    pub fn client(&self) -> ClusterConnection {
        ClusterClient::builder(self.urls())
            .retries(20)
            .connection_timeout(Duration::from_secs(5))
            .build()
            .expect("cluster client")
            .get_connection()
            .expect("cluster connection")
    }

    /// The index of the node with this cluster id.
    pub fn index_of(&self, id: &str) -> usize {
        self.ids.iter().position(|i| i == id).unwrap_or_else(|| panic!("no node {id}"))
    }

    /// The node that serves `slot`, as node `asker` sees it.
    pub fn owner_seen_by(&self, asker: usize, slot: u16) -> Option<usize> {
        let nodes: String = cmd(&mut self.nodes[asker].conn(), &["CLUSTER", "NODES"]);
        nodes.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let is_master = fields.get(2).is_some_and(|f| f.split(',').any(|f| f == "master"));
            let serves = fields.iter().skip(8).any(|range| match range.split_once('-') {
                _ if range.starts_with('[') => false, // a migration in progress, not ownership
                Some((a, b)) => a.parse::<u16>().is_ok_and(|a| a <= slot) && b.parse::<u16>().is_ok_and(|b| slot <= b),
                None => range.parse::<u16>() == Ok(slot),
            });
            (is_master && serves).then(|| self.index_of(fields[0]))
        })
    }

    /// The node that serves `slot`, once every node agrees on it.
    pub fn owner(&self, slot: u16) -> usize {
        let mut owner = None;
        self.wait_until(&format!("every node agrees who serves slot {slot}"), |c| {
            let seen: Vec<Option<usize>> = (0..c.nodes.len()).map(|n| c.owner_seen_by(n, slot)).collect();
            owner = seen[0];
            owner.is_some() && seen.iter().all(|s| *s == owner)
        });
        owner.expect("owner")
    }

    /// The node replicating node `master`.
    pub fn replica_of(&self, master: usize) -> usize {
        let nodes: String = cmd(&mut self.nodes[master].conn(), &["CLUSTER", "NODES"]);
        let id = &self.ids[master];
        nodes
            .lines()
            .find_map(|line| {
                let fields: Vec<&str> = line.split(' ').collect();
                (fields.get(3) == Some(&id.as_str())).then(|| self.index_of(fields[0]))
            })
            .unwrap_or_else(|| panic!("node {master} has no replica"))
    }

    /// Waits until every node reports `cluster_state:ok`, every node sees
    /// one master per slot range with the same owners, and every replica's
    /// link to its master is up.
    pub fn wait_until_settled(&self) {
        self.wait_until("cluster_state:ok, agreed slots and replicas in sync", |c| {
            let states_ok = c.nodes.iter().all(|n| {
                let info: String = cmd(&mut n.conn(), &["CLUSTER", "INFO"]);
                info.lines().any(|l| l.trim_end() == "cluster_state:ok")
            });
            states_ok && c.slots_agree() && c.replicas_in_sync()
        });
    }

    fn slots_agree(&self) -> bool {
        let views: Vec<String> = self
            .nodes
            .iter()
            .map(|n| {
                let nodes: String = cmd(&mut n.conn(), &["CLUSTER", "NODES"]);
                let mut owned: Vec<String> = nodes
                    .lines()
                    .filter_map(|l| {
                        let f: Vec<&str> = l.split(' ').collect();
                        (f.len() > 8).then(|| format!("{} {}", f[0], f[8..].join(" ")))
                    })
                    .collect();
                owned.sort();
                owned.join("\n")
            })
            .collect();
        views.iter().all(|v| v == &views[0])
    }

    fn replicas_in_sync(&self) -> bool {
        self.nodes.iter().all(|n| {
            let info: String = cmd(&mut n.conn(), &["INFO", "replication"]);
            info.contains("role:master") || info.contains("master_link_status:up")
        })
    }

    /// Polls `ready` every 50 ms until it holds; panics after [`DEADLINE`].
    pub fn wait_until(&self, what: &str, mut ready: impl FnMut(&Cluster) -> bool) {
        let deadline = Instant::now() + DEADLINE;
        while !ready(self) {
            if Instant::now() >= deadline {
                let views: Vec<String> = self
                    .nodes
                    .iter()
                    .map(|n| format!("node :{}\n{}", n.port, cmd::<String>(&mut n.conn(), &["CLUSTER", "NODES"])))
                    .collect();
                panic!("cluster: not {what} within {DEADLINE:?}\n{}", views.join("\n"));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Runs a command whose words are all text, panicking on error.
pub fn cmd<T: redis::FromRedisValue>(con: &mut Connection, words: &[&str]) -> T {
    let mut c = redis::cmd(words[0]);
    for w in &words[1..] {
        c.arg(*w);
    }
    c.query(con).unwrap_or_else(|e| panic!("{}: {e}", words.join(" ")))
}

fn config_get(con: &mut Connection, name: &str) -> String {
    let pair: Vec<String> = cmd(con, &["CONFIG", "GET", name]);
    pair.get(1).cloned().unwrap_or_else(|| panic!("CONFIG GET {name}: {pair:?}"))
}
