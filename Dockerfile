# podium in a container: one static binary on an empty base image.
#
#   docker build -t podium \
#     --build-arg VERSION="$(git describe --tags --always --dirty)" \
#     --build-arg COMMIT="$(git rev-parse HEAD)" --build-arg DATE="$(date -u +%FT%TZ)" .
#   docker run -d --name podium -p 8080:8080 -v podium-data:/data podium
#   docker logs podium          # the admin key generated on first start, printed once
#
# The build arguments are optional: without them `podium version` says
# "(devel)" and "unknown", because the build context has no .git. Details,
# compose, systemd and the reverse proxy: docs/DEPLOY.md.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Modules first, so that a change to the code does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=
ARG COMMIT=
ARG DATE=
# Static (podium's SQLite is modernc.org/sqlite, pure Go), with the time
# zone database inside the binary (boards reset in any IANA zone, and the
# final image has no /usr/share/zoneinfo), stripped.
RUN CGO_ENABLED=0 go build -buildvcs=false -trimpath -tags timetzdata \
      -ldflags "-s -w -X main.Version=${VERSION} -X main.Commit=${COMMIT} -X main.Date=${DATE}" \
      -o /out/podium ./cmd/podium \
 && /out/podium version
# What the empty image cannot make for itself: a user to run as, and the
# data directory owned by it with mode 0700 (as podium would create it).
# /data is copied as a subdirectory of /out/volume: a directory copied as
# such keeps its mode, while COPY's destination directory would be 0755.
RUN mkdir -p /out/etc /out/volume/data \
 && echo 'podium:x:65532:65532:podium:/data:/sbin/nologin' > /out/etc/passwd \
 && echo 'podium:x:65532:' > /out/etc/group \
 && chmod 0700 /out/volume/data

FROM scratch
COPY --from=build /out/etc/passwd /out/etc/group /etc/
# CA certificates for postgres://...?sslmode=verify-full and rediss://.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build --chown=65532:65532 /out/volume/ /
COPY --from=build /out/podium /podium
USER 65532:65532
ENV PODIUM_ADDR=:8080 PODIUM_DATA=/data
EXPOSE 8080
VOLUME /data
# /readyz answers 200 when ready or degraded (reads served, writes may
# fail), 503 while loading or shutting down. A large board loads in
# seconds; raise --start-period for very large ones.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["/podium", "healthcheck"]
# podium shuts down gracefully on SIGTERM (docker stop), within
# --shutdown-timeout (10 s): give docker stop at least that (-t 20).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/podium"]
CMD ["serve"]
