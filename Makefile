# banter — make run (the bot), make test (the whole suite).
GO        ?= go
BIN       ?= bin/banter
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS   := -X main.buildVersion=$(VERSION)
GOFILES    = $(shell git ls-files '*.go' 2>/dev/null)

.PHONY: run build test lint bench interop-deps postgres-deps clean

## run: build and run the bot (needs DISCORD_TOKEN and OPENAI_API_KEY or OPENAI_BASE_URL)
run: build
	./$(BIN) run

## build: compile bin/banter
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/banter

## test: lint, install the npm interop peers, run every test (fuzz seeds included)
test: lint interop-deps postgres-deps
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

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## bench: the benchmarks named by the issues
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
