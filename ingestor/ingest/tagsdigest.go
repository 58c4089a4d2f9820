package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// tagsDigestScheme prefixes every TagsDigest: should the canonical form
// ever change, digests of the old form are told apart and not compared
// (which would re-emit every object at once), rather than found different.
const tagsDigestScheme = "t1:"

// TagsDigest is a digest of an object's tags and user metadata, the inputs
// of its readers and object metadata. The ingestor sends it with every read
// of them (pipeline.Access.TagsDigest: upload, tag change), the indexer
// records it in the object's state once the index holds that read, and the
// bucket lister gives it to each listed object from the listing's own copy
// of them (MinIO lists both with metadata=true), so the reconcile pass
// notices a tag change whose notification was lost: the ETag stays, this
// does not. Both sides must compute it with this one function, from the
// maps as the store returns them.
//
// The canonical form takes the spellings two reads of the same object may
// differ in as one: tag keys are case-sensitive and kept; user metadata
// keys are HTTP header names, compared lower-cased, and their values are
// decoded as userMetadata decodes them (a read may return the stored
// RFC 2047 words or decoded text). Nil and empty maps are the same.
func TagsDigest(tags, meta map[string]string) string {
	var b strings.Builder
	write := func(kind string, m map[string]string) {
		keys := slices.Sorted(maps.Keys(m))
		for _, k := range keys {
			// Quoted, so no key or value can pass for a separator.
			fmt.Fprintf(&b, "%s %s %s\n", kind, strconv.Quote(k), strconv.Quote(m[k]))
		}
	}
	write("tag", tags)
	lower := make(map[string]string, len(meta))
	for k, v := range userMetadata(meta) {
		lower[strings.ToLower(k)] = v
	}
	write("meta", lower)
	sum := sha256.Sum256([]byte(b.String()))
	return tagsDigestScheme + hex.EncodeToString(sum[:])
}

// comparableDigests reports whether two tags digests can be compared: both
// recorded, in the same scheme.
func comparableDigests(a, b string) bool {
	sa, _, oka := strings.Cut(a, ":")
	sb, _, okb := strings.Cut(b, ":")
	return oka && okb && sa == sb
}
