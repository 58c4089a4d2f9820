# syntax=docker/dockerfile:1.7
# Strata indexer: CHUNKS and EMBEDDINGS -> Weaviate; creates the Weaviate schema on start.
# Build from the repository root:
#   docker build -f deploy/docker/indexer.Dockerfile -t strata/indexer:0.1.0 .

# ---- build: the indexer binary and the healthcheck, static, from the module alone (no go.work)
FROM golang:1.26.8-bookworm AS build
ENV GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=local GOEXPERIMENT=jsonv2
WORKDIR /src
# Module files first: the download layer survives source edits.
COPY shared/go.mod shared/go.sum shared/
COPY indexer/go.mod indexer/go.sum indexer/
RUN --mount=type=cache,target=/root/go/pkg/mod cd indexer && go mod download
COPY shared/ shared/
COPY indexer/ indexer/
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    cd indexer && go build -trimpath -ldflags="-s -w" -o /out/indexer ./cmd/indexer
COPY deploy/docker/healthcheck/main.go /src/healthcheck/main.go
RUN --mount=type=cache,target=/root/.cache/go-build \
    cd /src/healthcheck && go mod init strata.local/healthcheck && \
    go build -trimpath -ldflags="-s -w" -o /out/healthcheck .

# ---- runtime: static binary on distroless, user nonroot (65532)
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/indexer /usr/local/bin/indexer
COPY --from=build /out/healthcheck /usr/local/bin/healthcheck
ENV STRATA_HTTP_ADDR=0.0.0.0:8083 \
    STRATA_LOG_FORMAT=json
EXPOSE 8083
USER 65532:65532
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["/usr/local/bin/healthcheck", "/readyz"]
ENTRYPOINT ["/usr/local/bin/indexer"]
