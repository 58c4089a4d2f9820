# syntax=docker/dockerfile:1.7
# Strata ingestor: bucket events -> fetch, extract, chunk -> CHUNKS stream.
# Build from the repository root:
#   docker build -f deploy/docker/ingestor.Dockerfile -t strata/ingestor:0.1.0 .
# The runtime is Debian slim, not distroless: PDFs are extracted by poppler
# (pdftotext, pdfinfo, pdftohtml, pdfimages; GPL, kept out of the binary as a
# subprocess) under prlimit (util-linux).

# ---- build: the ingestor, its PDF picture reader and the healthcheck, static, from the module alone (no go.work)
FROM golang:1.26.8-bookworm AS build
ENV GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=local GOEXPERIMENT=jsonv2
WORKDIR /src
# Module files first: the download layer survives source edits.
COPY shared/go.mod shared/go.sum shared/
COPY ingestor/go.mod ingestor/go.sum ingestor/
RUN --mount=type=cache,target=/root/go/pkg/mod cd ingestor && go mod download
COPY shared/ shared/
COPY ingestor/ ingestor/
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    cd ingestor && go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/ingestor ./cmd/strata-pdf-pictures
COPY deploy/docker/healthcheck/main.go /src/healthcheck/main.go
RUN --mount=type=cache,target=/root/.cache/go-build \
    cd /src/healthcheck && go mod init strata.local/healthcheck && \
    go build -trimpath -ldflags="-s -w" -o /out/healthcheck .

# ---- runtime
FROM debian:12.13-slim
RUN apt-get update && \
    apt-get install -y --no-install-recommends poppler-utils poppler-data util-linux ca-certificates && \
    rm -rf /var/lib/apt/lists/* && \
    command -v pdftotext pdfinfo pdftohtml pdfimages prlimit && \
    groupadd --system --gid 65532 strata && \
    useradd --system --uid 65532 --gid 65532 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin strata
COPY --from=build /out/ingestor /usr/local/bin/ingestor
# Beside the ingestor, where it finds it: reads PDF pictures without pdfimages' second pass.
COPY --from=build /out/strata-pdf-pictures /usr/local/bin/strata-pdf-pictures
COPY --from=build /out/healthcheck /usr/local/bin/healthcheck
ENV STRATA_HTTP_ADDR=0.0.0.0:8081 \
    STRATA_LOG_FORMAT=json
EXPOSE 8081
USER 65532:65532
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["/usr/local/bin/healthcheck", "/readyz"]
ENTRYPOINT ["/usr/local/bin/ingestor"]
