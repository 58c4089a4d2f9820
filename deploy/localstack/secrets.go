package localstack

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// APIKeyGrant is what the local stack's API key reads, as queryd's
// -api-keys spells it: every project (*) and every document whatever its
// groups (|*, an admin). It is the operator's own key on their machine; a
// key without |GROUPS would not see documents that name groups.
const APIKeyGrant = "*|*"

// APIKeyMeaning says APIKeyGrant in words, where the key is printed.
const APIKeyMeaning = "admin key: every project, every document whatever its groups (grant " + APIKeyGrant + ")"

// Env is what a user or test needs to talk to a running stack.
type Env struct {
	MCPURL, APIKey                       string
	S3Endpoint, S3AccessKey, S3SecretKey string
	Bucket, NATSURL                      string
	WeaviateHost, WeaviateWriterKey      string
}

// Lines renders the env as KEY=VALUE lines, sorted.
func (e Env) Lines() []string {
	m := map[string]string{
		"STRATA_MCP_URL": e.MCPURL, "STRATA_API_KEY": e.APIKey, "STRATA_S3_ENDPOINT": e.S3Endpoint,
		"STRATA_S3_ACCESS_KEY": e.S3AccessKey, "STRATA_S3_SECRET_KEY": e.S3SecretKey, "STRATA_BUCKET": e.Bucket,
		"NATS_URL": e.NATSURL,
	}
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// loadSecrets reads the stack's generated secrets, creating them on first use.
func loadSecrets(path string) (map[string]string, error) {
	m := map[string]string{}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				m[k] = v
			}
		}
		f.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	changed := false
	for _, k := range []string{"STRATA_API_KEY", "STRATA_CURSOR_SECRET"} {
		if m[k] == "" {
			b := make([]byte, 24)
			if _, err := rand.Read(b); err != nil {
				return nil, err
			}
			prefix := "sk-local-"
			if k == "STRATA_CURSOR_SECRET" {
				prefix = ""
			}
			m[k] = prefix + hex.EncodeToString(b)
			changed = true
		}
	}
	if changed {
		body := fmt.Sprintf("STRATA_API_KEY=%s\nSTRATA_CURSOR_SECRET=%s\n", m["STRATA_API_KEY"], m["STRATA_CURSOR_SECRET"])
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// writeEnvFile writes e's lines under a comment that says what the key
// reads (readers skip # lines: the strata command, strata-local, a shell).
func writeEnvFile(path string, e Env) error {
	head := "# STRATA_API_KEY is an " + APIKeyMeaning + "\n"
	return os.WriteFile(path, []byte(head+strings.Join(e.Lines(), "\n")+"\n"), 0o600)
}
