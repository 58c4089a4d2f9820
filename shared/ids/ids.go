// Package ids derives Strata's deterministic identifiers. Every identifier is a
// UUIDv5 of its parent identifier and a distinguishing name, so reprocessing the
// same input always yields the same IDs and every index write is an idempotent
// upsert. The same IDs serve as Knowledge Stack path_part_ids.
package ids

import (
	"strconv"

	"github.com/google/uuid"
)

// namespace is Strata's root UUIDv5 namespace; changing it changes every ID.
var namespace = uuid.MustParse("6f2d3a4e-8c1b-5e7f-9a0d-2b4c6e8f0a1c")

func derive(parent uuid.UUID, parts ...string) string {
	name := ""
	for i, p := range parts {
		if i > 0 {
			name += "\x00"
		}
		name += p
	}
	return uuid.NewSHA1(parent, []byte(name)).String()
}

// Project returns the ID of a project; it is the root of all other IDs.
func Project(project string) string { return derive(namespace, "project", project) }

// Branch returns the deterministic branch_id of a named branch. The main branch
// has no ID (branch_id null), so Branch("main") is never used for reads.
func Branch(project, branch string) string {
	return derive(uuid.MustParse(Project(project)), "branch", branch)
}

// File returns the file_id of a path on a branch ("" = main).
func File(project, branch, path string) string {
	return derive(uuid.MustParse(Project(project)), "file", branch, path)
}

// Folder returns the path_part_id of a folder ("" is the project root).
func Folder(project, branch, folder string) string {
	return derive(uuid.MustParse(Project(project)), "folder", branch, folder)
}

// FileVersion returns the file_version_id of one stored version of a file,
// identified by the object's version (ETag or version id) and content checksum.
func FileVersion(fileID, objectVersion, checksum string) string {
	return derive(uuid.MustParse(fileID), "version", objectVersion, checksum)
}

// Section returns the ID of the ordinal-th section of a file version.
func Section(fileVersionID string, ordinal int) string {
	return derive(uuid.MustParse(fileVersionID), "section", strconv.Itoa(ordinal))
}

// Chunk returns the ID of the index-th chunk of a file version.
func Chunk(fileVersionID string, index int) string {
	return derive(uuid.MustParse(fileVersionID), "chunk", strconv.Itoa(index))
}

// Valid reports whether s is a UUID in canonical form.
func Valid(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}

// Release returns the release_id of a version string on a branch ("" = main).
func Release(project, branch, version string) string {
	return derive(uuid.MustParse(Project(project)), "release", branch, version)
}

// ChunkVector identifies the embedding of a chunk by one model.
func ChunkVector(chunkID, model string) string {
	return derive(namespace, "chunk-vector", chunkID, model)
}
