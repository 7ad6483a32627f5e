# syntax=docker/dockerfile:1
# Build: docker build -t banter .
# Multi-arch: docker buildx build --platform linux/amd64,linux/arm64 -t REGISTRY/banter:TAG --push .
#   (each platform's build stage runs natively or under QEMU emulation, so cgo links that
#   platform's libopus through pkg-config; no cross toolchain is needed inside the image)
# Run:   docker run --rm -e DISCORD_TOKEN -e OPENAI_API_KEY -v banter-data:/data -p 9090:9090 banter
FROM golang:1.26-bookworm AS build
# cgo links the system libopus (docs/audio.md): its headers and pkg-config file.
RUN apt-get update && apt-get install -y --no-install-recommends pkg-config libopus-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
RUN go build -trimpath -ldflags "-s -w -X main.buildVersion=${VERSION}" -o /out/banter ./cmd/banter

FROM debian:bookworm-slim
# libopus0: the shared libopus the binary links (Debian security updates apply to it).
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates libopus0 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data --create-home banter
COPY --from=build /out/banter /usr/local/bin/banter
USER banter
WORKDIR /data
# Mount a config and pass it: -e BANTER_CONFIG=/etc/banter/banter.yaml -v ./banter.yaml:/etc/banter/banter.yaml
# Without one, the built-in defaults apply. The store defaults to ./data/banter.db, i.e.
# /data/data/banter.db in this image. Inside the container metrics listen on all interfaces
# (the binary's own default is 127.0.0.1:9090); override with -e BANTER_METRICS_LISTEN=...
ENV BANTER_METRICS_LISTEN=0.0.0.0:9090
# Without DISCORD_TOKEN the image stops with what to set, instead of starting the loopback-only
# playground that `banter run` offers on a developer's machine.
ENV BANTER_REQUIRE_TOKEN=1
EXPOSE 9090
# `banter health` GETs /healthz on the address BANTER_METRICS_LISTEN (or the config) names;
# `banter health -ready` checks /readyz (Discord connected), for orchestrators' readiness probes.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/usr/local/bin/banter", "health"]
ENTRYPOINT ["/usr/local/bin/banter"]
CMD ["run"]
