# syntax=docker/dockerfile:1
# Build: docker build -t banter .
# Run:   docker run --rm -e DISCORD_TOKEN -e OPENAI_API_KEY -v banter-data:/data banter
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
# cgo stays on: libopus is compiled into the binary through layeh.com/gopus.
RUN go build -trimpath -ldflags "-s -w -X main.buildVersion=${VERSION}" -o /out/banter ./cmd/banter

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data --create-home banter
COPY --from=build /out/banter /usr/local/bin/banter
USER banter
WORKDIR /data
# Mount a config and pass it: -e BANTER_CONFIG=/etc/banter/banter.yaml -v ./banter.yaml:/etc/banter/banter.yaml
# Without one, the built-in defaults apply. The store defaults to ./data/banter.db, i.e.
# /data/data/banter.db in this image. Set metrics.listen to 0.0.0.0:9090 to scrape from outside.
EXPOSE 9090
ENTRYPOINT ["/usr/local/bin/banter"]
CMD ["run"]
