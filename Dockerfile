# openload as a static binary on distroless: the image the Kubernetes
# manifests in deploy/kubernetes/ run (one image for the generator and the
# stub). Build: docker build -t openload:dev .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO off: a static binary that needs nothing from the image beneath it.
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/openload ./cmd/openload

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/openload /openload
USER nonroot:nonroot
ENTRYPOINT ["/openload"]
