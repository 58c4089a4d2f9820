# syntax=docker/dockerfile:1.7
# MinIO built from the source commit Strata pins and tests against
# (shared/testservers.MinIO): MinIO publishes no container image of it (its last
# image, RELEASE.2025-09-07, predates the pin by five months), so compose and
# Kubernetes run this one and run what `go tool task up` and the tests run.
# Build from the repository root:
#   docker build -f deploy/docker/minio.Dockerfile -t strata/minio:v0.0.0-20260212201848-7aac2a2c5b7c .
# deploy/manifests checks that MINIO_VERSION, the image tags and the pin agree.
ARG MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c

# ---- build: go install at the pinned version, static, as shared/testservers does
FROM golang:1.26.8-bookworm AS build
ARG MINIO_VERSION
ENV GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOBIN=/out go install -trimpath -ldflags="-s -w" github.com/minio/minio@${MINIO_VERSION}
COPY deploy/docker/healthcheck/main.go /src/healthcheck/main.go
RUN --mount=type=cache,target=/root/.cache/go-build \
    cd /src/healthcheck && go mod init strata.local/healthcheck && \
    go build -trimpath -ldflags="-s -w" -o /out/healthcheck .
# Mount points owned by the runtime user: volumes created from them inherit it.
RUN mkdir -p /mnt/data /mnt/queue && chown 65532:65532 /mnt/data /mnt/queue

# ---- runtime: static binary on distroless, user nonroot (65532)
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/minio /usr/local/bin/minio
COPY --from=build /out/healthcheck /usr/local/bin/healthcheck
COPY --from=build --chown=65532:65532 /mnt/data /data
COPY --from=build --chown=65532:65532 /mnt/queue /queue
ENV MINIO_UPDATE=off
EXPOSE 9000
USER 65532:65532
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/local/bin/healthcheck", "http://127.0.0.1:9000/minio/health/ready"]
ENTRYPOINT ["/usr/local/bin/minio"]
CMD ["server", "/data", "--address", ":9000", "--quiet"]
