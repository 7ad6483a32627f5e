# banter — make run (the bot), make test (the whole suite).
GO        ?= go
BIN       ?= bin/banter
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS   := -X main.buildVersion=$(VERSION)
GOFILES    = $(shell git ls-files '*.go' 2>/dev/null)

.PHONY: run build build-arm64 test lint bench bench-all interop-deps deps test-deps postgres-deps clean

## run: build and run the bot (needs DISCORD_TOKEN and OPENAI_API_KEY or OPENAI_BASE_URL)
run: build
	./$(BIN) run

## build: compile bin/banter (needs pkg-config and libopus-dev: see deps)
build: deps
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/banter

## test: lint, install the npm interop peers, run every test (fuzz seeds included)
test: test-deps lint interop-deps postgres-deps
	BANTER_REQUIRE_POSTGRES=1 $(GO) test -count=1 -timeout 18m ./...

## postgres-deps: Debian's PostgreSQL server binaries for the store's Postgres tests (a throwaway
## cluster per test run, as an unprivileged user; no system service is started)
postgres-deps:
	@if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		echo "installing postgresql (server binaries for the store tests)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	fi

## interop-deps: the unmodified third-party clients the fidelity tests run (discord.js, @discordjs/voice, davey)
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

# apt_install installs Debian packages, through sudo when not root.
apt_install = echo "installing $(1) (apt-get)"; \
	SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	$$SUDO apt-get update -qq >/dev/null && \
	DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $(1) >/dev/null

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## bench: the headline ratios in one run, one table (printed and written to bench/REPORT.md)
bench: deps interop-deps
	$(GO) run ./bench/report -o bench/REPORT.md

## bench-all: every Go benchmark of every package
bench-all: deps
	$(GO) test -run '^$$' -bench . -benchmem ./...

## build-arm64: cross-compile bin/banter-arm64 with cgo (Debian: gcc-aarch64-linux-gnu and
## libopus-dev:arm64 after `dpkg --add-architecture arm64`; see deploy/README.md)
build-arm64:
	CGO_ENABLED=1 GOOS=linux GOARCH=arm64 CC=aarch64-linux-gnu-gcc \
	PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig \
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)-arm64 ./cmd/banter

clean:
	rm -rf bin
