# banter — make run (the bot), make test (the whole suite).
GO        ?= go
BIN       ?= bin/banter
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS   := -X main.buildVersion=$(VERSION)
GOFILES    = $(shell git ls-files '*.go' 2>/dev/null)

.PHONY: run build build-arm64 arm64-deps check-arm64 test lint bench bench-all bench-scale interop-deps deps test-deps browser-deps postgres-deps pgvector-deps vad-data clean

## run: build and run the bot (with DISCORD_TOKEN: on Discord; without: the playground, a web page
## where you talk to banter on simulated Discord; real models with OPENAI_API_KEY or OPENAI_BASE_URL)
run: build
	./$(BIN) run

## build: compile bin/banter (needs pkg-config and libopus-dev: see deps)
build: deps
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/banter

# RACE_PKGS have concurrency of their own: make test runs them under the race
# detector, and every other package without it (to keep the suite within its
# CI budget on 2 cores).
RACE_PKGS ?= ./text/ ./voice/ ./voice/realtime/ ./discord/voice/... ./discord/dave/ \
	./discord/dave/voiceadapter/ ./discord/ ./discord/bots/ ./decision/ ./config/ ./store/ ./llm/ ./llm/realtime/ ./llm/gemini/ ./sim/... ./playground/

# TEST_PARALLEL is how many parallel tests of one package run at once (go test -parallel; its
# default is GOMAXPROCS, 2 on CI). The end-to-end tests mostly wait: on real-time audio (a
# voice test plays its turns at 20 ms a frame), on the simulators and on discordgo's 1 s
# shutdown. The voice package's 60 tests used 0.16 of a core over their 6 minutes under -race
# (57 s of CPU), text's 0.66. With 6 at once the race phase takes about half as long.
TEST_PARALLEL ?= 6

# ARTIFACTS keeps what tests save for people to look at (the playground's browser screenshots).
ARTIFACTS ?= $(CURDIR)/bin/artifacts

## test: lint, install the npm interop peers, Postgres and Chromium, run every test (fuzz seeds included):
## RACE_PKGS with -race, the rest without; the browser tests' screenshots go to $(ARTIFACTS)
test: test-deps lint interop-deps postgres-deps pgvector-deps browser-deps
	@echo "== go test -race: $$($(GO) list $(RACE_PKGS) | wc -l) packages with concurrency of their own"
	BANTER_REQUIRE_POSTGRES=1 $(GO) test -race -count=1 -parallel $(TEST_PARALLEL) -timeout 15m $(RACE_PKGS)
	@echo "== -race packages passed"
	@echo "== go test: every other package"
	race="$$($(GO) list $(RACE_PKGS))"; \
	BANTER_REQUIRE_POSTGRES=1 BANTER_REQUIRE_BROWSER=1 BANTER_ARTIFACTS=$(ARTIFACTS) \
	$(GO) test -count=1 -parallel $(TEST_PARALLEL) -timeout 20m $$($(GO) list ./... | grep -vxF "$$race")

## postgres-deps: Debian's PostgreSQL server binaries for the store's Postgres tests (a throwaway
## cluster per test run, as an unprivileged user; no system service is started)
postgres-deps:
	@if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		$(call apt_install,postgresql); fi

## pgvector-deps: the pgvector extension for the store's Postgres tests (search by meaning in the
## database). Debian bookworm does not package it: Debian's own source tarball of it, its sha256
## pinned, built against the installed server (postgresql-server-dev) and installed into it
PGVECTOR_VERSION = 0.8.0
PGVECTOR_SHA256 = 867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0
PGVECTOR_URL = http://deb.debian.org/debian/pool/main/p/pgvector/pgvector_$(PGVECTOR_VERSION).orig.tar.gz
pgvector-deps: postgres-deps
	@set -e; PGBIN=$$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1); PGVER=$$(basename $$(dirname $$PGBIN)); \
	if [ ! -f /usr/share/postgresql/$$PGVER/extension/vector.control ]; then \
		if [ ! -x $$PGBIN/pg_config ] || [ ! -d /usr/include/postgresql/$$PGVER/server ]; then \
			$(call apt_install,postgresql-server-dev-$$PGVER); fi; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		TMP=$$(mktemp -d); trap 'rm -rf "$$TMP"' EXIT; \
		echo "building pgvector $(PGVECTOR_VERSION) for PostgreSQL $$PGVER"; \
		curl -fsSL -o "$$TMP/pgvector.tar.gz" "$(PGVECTOR_URL)"; \
		echo "$(PGVECTOR_SHA256)  $$TMP/pgvector.tar.gz" | sha256sum -c --quiet; \
		tar -xzf "$$TMP/pgvector.tar.gz" -C "$$TMP"; \
		$(MAKE) -s -C "$$TMP/pgvector-$(PGVECTOR_VERSION)" USE_PGXS=1 PG_CONFIG=$$PGBIN/pg_config OPTFLAGS="" >/dev/null; \
		$$SUDO $(MAKE) -s -C "$$TMP/pgvector-$(PGVECTOR_VERSION)" USE_PGXS=1 PG_CONFIG=$$PGBIN/pg_config OPTFLAGS="" install >/dev/null; fi

## browser-deps: Debian's Chromium for the playground's browser tests (driven headless by chromedp)
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
		$(call apt_install,chromium); fi

## interop-deps: the unmodified third-party clients the fidelity tests run (discord.js, @discordjs/voice, davey, @google/genai)
interop-deps:
	cd interop && npm ci --no-audit --no-fund --loglevel=error

## deps: install the build's system packages when missing (Debian/Ubuntu: pkg-config, libopus-dev
## for the cgo libopus binding); idempotent and quiet when everything is there
deps:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists opus; then \
		$(call apt_install,pkg-config libopus-dev); fi

## test-deps: deps plus Debian's prometheus (promtool and the server the deploy/prometheus tests run)
test-deps: deps
	@if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then \
		$(call apt_install,prometheus); fi

# apt_install installs Debian packages, through sudo when not root (waiting up to 5 minutes for
# another apt or dpkg holding the lock, instead of failing).
apt_install = echo "installing $(1) (apt-get)"; \
	SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	$$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null && \
	DEBIAN_FRONTEND=noninteractive $$SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends $(1) >/dev/null


# WALLCLOCK_BOUND matches an elapsed-time upper bound asserted in a test. Tests
# wait on events (a deadline only as a failure guard); speed is for benchmarks
# (bench*_test.go) and bench/. Tests on synctest's fake clock are exempt.
WALLCLOCK_BOUND = time\.Since\(.*\) *>=?|\.Elapsed\(\) *>=?|(:= *time\.Since\(.*\)|:= *\w+\.Sub\(.*\)); *\w+ *>=?|< *time\.Since|\b(elapsed|took|el|dur|latency) *>=? |took too long

## lint: gofmt, go vet, and no wall-clock upper bound asserted in a test
lint:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	@files=$$(grep -rL --include='*_test.go' --exclude='bench*_test.go' --exclude-dir=node_modules -e 'testing/synctest' .); \
	if grep -nE '$(WALLCLOCK_BOUND)' $$files; then echo "elapsed-time upper bound asserted in a test: wait on an event instead"; exit 1; fi
	$(GO) vet ./...

## bench: the headline ratios in one run, one table (printed and written to bench/REPORT.md)
bench: deps interop-deps vad-data
	$(GO) run ./bench/report -o bench/REPORT.md

# VADDATA is where vad-data installs the recordings (go run ./bench/vad -data DIR reads them; it
# defaults to $$VADDATA, then this directory).
VADDATA ?= $(HOME)/.cache/banter/vaddata

## vad-data: the real recordings bench/vad's evaluation set is built from: Debian packages fetched with
## apt-get download (nothing installed but vorbis-tools and sox, for oggdec and GSM) and unpacked into $(VADDATA);
## idempotent and quiet when present (bench/vad/README.md lists sources and licences)
vad-data:
	@scripts/vaddata.sh "$(VADDATA)"

## bench-scale: text turns per second and Postgres round trips, REST requests and CPU per turn, 1 vs 3 processes (docs/scaling.md)
bench-scale: deps postgres-deps
	$(GO) run ./bench/scale

## bench-all: every Go benchmark of every package
bench-all: deps
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: run every fuzz target for FUZZTIME each (default 60s; not part of make test) and print a table
FUZZTIME  ?= 60s
.PHONY: fuzz
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) ./scripts/fuzz.sh

# ARM64_ENV cross-compiles with cgo for linux/arm64, linking Debian's arm64 libopus.
ARM64_ENV = CGO_ENABLED=1 GOOS=linux GOARCH=arm64 CC=aarch64-linux-gnu-gcc \
	PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig

## build-arm64: cross-compile bin/banter-arm64 with cgo (needs arm64-deps; see deploy/README.md)
build-arm64:
	$(ARM64_ENV) $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)-arm64 ./cmd/banter

## arm64-deps: the cross toolchain (Debian: arm64 as a foreign architecture, gcc-aarch64-linux-gnu,
## libopus-dev:arm64) and qemu-user to run arm64 binaries on an amd64 host
arm64-deps:
	@if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-aarch64 >/dev/null 2>&1 || \
		[ ! -e /usr/lib/aarch64-linux-gnu/pkgconfig/opus.pc ]; then \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; $$SUDO dpkg --add-architecture arm64; \
		$(call apt_install,gcc-aarch64-linux-gnu libc6-dev-arm64-cross libopus-dev:arm64 qemu-user); fi

## check-arm64: for CI, not make test (minutes): build bin/banter-arm64, then run it, audio/opus's
## tests and cmd/banter's text and voice end-to-end tests, all built for arm64, under qemu-aarch64
check-arm64: arm64-deps build-arm64
	file $(BIN)-arm64 | grep 'ARM aarch64'
	qemu-aarch64 -L / $(BIN)-arm64 version
	$(ARM64_ENV) $(GO) test -c -o bin/opus-arm64.test ./audio/opus
	cd audio/opus && qemu-aarch64 -L / ../../bin/opus-arm64.test -test.run 'TestLinkedLibopus' -test.v
	cd audio/opus && qemu-aarch64 -L / ../../bin/opus-arm64.test
	$(ARM64_ENV) $(GO) test -c -o bin/banter-arm64.test ./cmd/banter
	cd cmd/banter && qemu-aarch64 -L / ../../bin/banter-arm64.test -test.v \
		-test.run 'TestRunServesAndShutsDownGracefully|TestRunVoiceJoinAndAnswer/stt_pipeline'

clean:
	rm -rf bin
