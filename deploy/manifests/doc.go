// Package manifests holds the offline checks of Strata's deployment files,
// as tests: the Kubernetes manifests (deploy/k8s, built with kustomize and
// decoded strictly into the k8s.io/api types), the single-host compose file
// (deploy/compose, loaded and schema-validated with compose-go) and the
// Dockerfiles (deploy/docker, parsed with BuildKit's parser). Nothing here
// needs Docker, a cluster or the network; see deploy/k8s/README.md for what
// these checks do not cover.
package manifests
