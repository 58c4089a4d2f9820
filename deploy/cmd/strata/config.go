package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const connectionHelp = `Connection settings (each: flag, else environment variable, else the env file, else default):
  --env-file      STRATA_ENV_FILE       KEY=VALUE file; default: .strata/local.env in this folder or
                                        a parent, or next to the binary's bin/ (go tool task up writes it)
  --mcp-url       STRATA_MCP_URL        queryd's MCP endpoint (http://127.0.0.1:8090/mcp)
  --api-key       STRATA_API_KEY        bearer API key for the MCP endpoint
  --s3-endpoint   STRATA_S3_ENDPOINT    S3 host:port, or http(s)://host:port (127.0.0.1:9000)
  --s3-access-key STRATA_S3_ACCESS_KEY
  --s3-secret-key STRATA_S3_SECRET_KEY
  --bucket        STRATA_BUCKET         the watched bucket (strata)
  --nats-url      STRATA_NATS_URL       NATS (nats://127.0.0.1:4222; NATS_URL in the env file)
`

// needs says which connections a command uses.
type needs uint8

const (
	needMCP needs = 1 << iota
	needS3
	needNATS
)

// setting is one connection setting: its flag, environment variable, keys
// in the env file and default.
type setting struct {
	flag, env string
	fileKeys  []string
	def       string
	need      needs
	help      string
}

var settings = []setting{
	{"mcp-url", "STRATA_MCP_URL", []string{"STRATA_MCP_URL"}, "http://127.0.0.1:8090/mcp", needMCP, "queryd's MCP endpoint"},
	{"api-key", "STRATA_API_KEY", []string{"STRATA_API_KEY"}, "", needMCP, "bearer API key for the MCP endpoint"},
	{"s3-endpoint", "STRATA_S3_ENDPOINT", []string{"STRATA_S3_ENDPOINT"}, "127.0.0.1:9000", needS3, "S3 endpoint: host:port or http(s)://host:port"},
	{"s3-access-key", "STRATA_S3_ACCESS_KEY", []string{"STRATA_S3_ACCESS_KEY"}, "", needS3, "S3 access key"},
	{"s3-secret-key", "STRATA_S3_SECRET_KEY", []string{"STRATA_S3_SECRET_KEY"}, "", needS3, "S3 secret key"},
	{"bucket", "STRATA_BUCKET", []string{"STRATA_BUCKET"}, "strata", needS3, "the watched bucket"},
	{"nats-url", "STRATA_NATS_URL", []string{"STRATA_NATS_URL", "NATS_URL"}, "nats://127.0.0.1:4222", needNATS, "NATS server URL"},
}

// conn is the resolved connection settings.
type conn struct {
	values  map[string]string // by flag name
	envFile string            // the env file read ("" = none)
}

func (c conn) get(flag string) string { return c.values[flag] }

// connFlags are the connection flags a command registered.
type connFlags struct {
	envFile string
	values  map[string]*string
	need    needs
}

// addConnFlags registers --env-file and the settings of what the command needs.
func addConnFlags(f *flags, need needs) *connFlags {
	cf := &connFlags{values: map[string]*string{}, need: need}
	f.StringVar(&cf.envFile, "env-file", "", "connection settings as KEY=VALUE lines (STRATA_ENV_FILE; default .strata/local.env)")
	f.conn["env-file"] = true
	for _, s := range settings {
		if s.need&need == 0 {
			continue
		}
		v := new(string)
		help := fmt.Sprintf("%s (%s, else the env file", s.help, s.env)
		if s.def != "" {
			help += ", else " + s.def
		}
		f.StringVar(v, s.flag, "", help+")")
		f.conn[s.flag] = true
		cf.values[s.flag] = v
	}
	return cf
}

// resolve reads the env file and environment and applies the flags.
func (cf *connFlags) resolve(a *app) (conn, error) {
	c := conn{values: map[string]string{}}
	path, explicit := cf.envFile, cf.envFile != ""
	if !explicit {
		if path = a.getenv("STRATA_ENV_FILE"); path != "" {
			explicit = true
		} else {
			path = findEnvFile(a)
		}
	}
	file := map[string]string{}
	if path != "" {
		var err error
		if file, err = readEnvFile(path); err != nil {
			if explicit || !errors.Is(err, os.ErrNotExist) {
				return c, fmt.Errorf("env file: %w", err)
			}
			path = ""
		}
	}
	c.envFile = path
	for _, s := range settings {
		v, ok := cf.values[s.flag]
		if !ok {
			continue
		}
		switch {
		case *v != "":
			c.values[s.flag] = *v
		case a.getenv(s.env) != "":
			c.values[s.flag] = a.getenv(s.env)
		default:
			c.values[s.flag] = s.def
			for _, k := range s.fileKeys {
				if file[k] != "" {
					c.values[s.flag] = file[k]
					break
				}
			}
		}
	}
	return c, nil
}

// require fails with a one-line reason when a setting has no value.
func (c conn) require(flags ...string) error {
	for _, name := range flags {
		if c.values[name] != "" {
			continue
		}
		for _, s := range settings {
			if s.flag == name {
				where := "no env file found; go tool task up writes .strata/local.env"
				if c.envFile != "" {
					where = "not in " + c.envFile
				}
				return fmt.Errorf("no %s: set --%s or %s (%s)", s.help, s.flag, s.env, where)
			}
		}
	}
	return nil
}

// findEnvFile looks for .strata/local.env from the working directory up,
// then beside the binary (.strata/bin/strata -> .strata/local.env).
func findEnvFile(a *app) string {
	if dir, err := a.getwd(); err == nil {
		for {
			p := filepath.Join(dir, ".strata", "local.env")
			if _, err := os.Stat(p); err == nil {
				return p
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if exe, err := a.executable(); err == nil {
		p := filepath.Join(filepath.Dir(filepath.Dir(exe)), "local.env")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// readEnvFile reads KEY=VALUE lines; blank lines, # comments and a leading
// "export " are allowed, and values may be quoted.
func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE", path, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, sc.Err()
}
