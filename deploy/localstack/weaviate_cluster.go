package localstack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
)

// clusterStatistics is the part of Weaviate's /v1/cluster/statistics read here.
type clusterStatistics struct {
	Statistics []struct {
		Name     string `json:"name"`
		LeaderID string `json:"leaderId"`
		Ready    bool   `json:"ready"`
		Status   string `json:"status"`
	} `json:"statistics"`
	Synchronized bool `json:"synchronized"`
}

// weaviateStatistics asks any live node of the cluster for its Raft view.
func weaviateStatistics(ctx context.Context, s *Stack) (clusterStatistics, error) {
	var st clusterStatistics
	var errs []string
	for _, host := range schema.Hosts(s.Servers.WeaviateHosts()) {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, "http://"+host+"/v1/cluster/statistics", nil)
		req.Header.Set("Authorization", "Bearer "+testservers.LocalWeaviateWriter)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
		}
		cancel()
		if err == nil {
			return st, nil
		}
		errs = append(errs, fmt.Sprintf("%s: %v", host, err))
	}
	return st, fmt.Errorf("weaviate cluster statistics: %s", strings.Join(errs, "; "))
}

// WeaviateLeader returns which node leads the Weaviate cluster's Raft group,
// as an index into Servers.WeaviateNodes() (0 is node1).
func WeaviateLeader(ctx context.Context, s *Stack) (int, error) {
	st, err := weaviateStatistics(ctx, s)
	if err != nil {
		return 0, err
	}
	for _, n := range st.Statistics {
		if id := n.LeaderID; strings.HasPrefix(id, "node") && len(id) == 5 {
			return int(id[4] - '1'), nil
		}
	}
	return 0, fmt.Errorf("weaviate cluster has no leader: %+v", st)
}

// WaitWeaviateSettled waits until every node of the Weaviate cluster is
// ready and healthy, agrees on one leader and the Raft log is in sync: a
// node killed after that leaves a quorum behind.
func WaitWeaviateSettled(ctx context.Context, s *Stack, nodes int) error {
	var last string
	for {
		st, err := weaviateStatistics(ctx, s)
		if err == nil {
			leaders, healthy := map[string]bool{}, 0
			for _, n := range st.Statistics {
				leaders[n.LeaderID] = true
				if n.Ready && n.Status == "HEALTHY" {
					healthy++
				}
			}
			if st.Synchronized && healthy == nodes && len(leaders) == 1 && !leaders[""] {
				return nil
			}
			last = fmt.Sprintf("%+v", st)
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("weaviate cluster not settled: %s", last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
