package testservers

// clusterFailover are the settings that let a multi-node Weaviate (v1.35)
// serve reads soon after one node's loss. deploy/k8s/base/weaviate.yaml
// sets the same.
//
// Reads by id, schema and tenant listings of multi-tenant collections ask
// the Raft leader (usecases/schema/manager.go TenantsShards ->
// cluster/raft_query_endpoints.go Raft.Query), so after the leader's loss
// they wait on every node until a new leader is elected. Weaviate's default
// RAFT_TIMEOUTS_MULTIPLIER is 5: a follower notices the leader is gone after
// 5-10 s (heartbeat timeout 1 s x 5, randomised up to twice that) and the
// election takes as long again; reads stalled for 10-12 s here. With 1
// (hashicorp/raft's own defaults) a new leader is in place after 1-3 s.
//
// MEMBERLIST_FAST_FAILURE_DETECTION sets memberlist's suspicion multiplier
// to 1, so a dead node leaves the member list (and with it every read
// routing plan, cluster/router/router.go buildReplicas) after about a
// second instead of several: on a network where a dead node's address does
// not refuse connections, a read then does not wait on it at all.
var clusterFailover = []string{
	"RAFT_TIMEOUTS_MULTIPLIER=1",
	"MEMBERLIST_FAST_FAILURE_DETECTION=true",
}
