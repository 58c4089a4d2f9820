// Package usercache names Strata's folders in the user's cache directory
// (~/.cache/strata/... on Linux): they outlive clones of the repository,
// and an environment variable moves each one.
package usercache

import (
	"fmt"
	"os"
	"path/filepath"
)

// Dir is $env when it is set, else <user cache dir>/strata/name.
func Dir(env, name string) (string, error) {
	if d := os.Getenv(env); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locate cache dir (set %s): %w", env, err)
	}
	return filepath.Join(d, "strata", name), nil
}
