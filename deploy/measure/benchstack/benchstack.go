// Package benchstack starts the local stack for the measurement programs
// under deploy/measure: on free ports, so that a measurement runs beside any
// other stack on the machine, with queryd's per-session tool budget off (a
// measurement calls tools thousands of times in one session), and with an
// S3 client to upload with.
package benchstack

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/shared/bucket"
)

// Stack is a running local stack with an S3 client.
type Stack struct {
	*localstack.Stack
	S3 *minio.Client
}

// Start starts the local stack as o says (its Ports are chosen here) and
// waits until it is ready.
func Start(ctx context.Context, o localstack.Options) (*Stack, error) {
	ports, err := localstack.FreePorts()
	if err != nil {
		return nil, fmt.Errorf("free ports: %w", err)
	}
	o.Ports = ports
	o.ServiceEnv = withoutToolBudget(o.ServiceEnv)
	st, err := localstack.Up(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("start the local stack (logs in %s): %w", filepath.Join(o.StateDir, "data", "logs"), err)
	}
	s3, err := bucket.Client(st.Env.S3Endpoint, st.Env.S3AccessKey, st.Env.S3SecretKey, false)
	if err != nil {
		st.Stop(30 * time.Second)
		return nil, fmt.Errorf("S3 client: %w", err)
	}
	return &Stack{Stack: st, S3: s3}, nil
}

// withoutToolBudget is env with queryd's tool budget off, ahead of what env
// gives queryd (a copy: env is the caller's).
func withoutToolBudget(env map[string][]string) map[string][]string {
	out := maps.Clone(env)
	if out == nil {
		out = map[string][]string{}
	}
	out["queryd"] = append([]string{"STRATA_TOOL_BUDGET=0"}, env["queryd"]...)
	return out
}

// Session opens an MCP session to queryd with the stack's API key; name
// tells the server which program asks.
func (s *Stack) Session(ctx context.Context, name string) (*client.Client, error) {
	return mcpclient.Connect(ctx, s.Env.MCPURL, s.Env.APIKey, name)
}
