# redis-rl: `make help` lists the targets.

CARGO   ?= cargo
PORT    ?= 6379
MODULE  := $(CURDIR)/target/release/libredis_rl.so
SERVER  ?= redis-server

.PHONY: help deps build run test test-unit test-integration lint bench-core clean

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  make %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

deps: ## Install redis-server, redis-tools, libclang and a C compiler if missing (apt)
	@scripts/deps.sh

build: deps ## Build the release module: target/release/libredis_rl.so
	$(CARGO) build --release --lib

run: build ## Build, then run redis-server in the foreground with the module (PORT=6379)
	@echo "redis-rl: starting $(SERVER) on port $(PORT) with $(MODULE)"
	exec $(SERVER) --port $(PORT) --save "" --appendonly no --enable-debug-command local --loadmodule $(MODULE)

test: build ## Run every test: core unit and property tests, then the integration suite against real servers
	REDIS_RL_MODULE=$(MODULE) REDIS_SERVER=$(SERVER) $(CARGO) test --all-targets

test-unit: ## Run only the pure-core unit and property tests (no server)
	$(CARGO) test --lib --test core_properties

lint: ## rustfmt check and clippy with warnings as errors
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

bench-core: ## Criterion benchmarks of the pure core (ns per decision)
	$(CARGO) bench --bench core

clean: ## Remove build output
	$(CARGO) clean
