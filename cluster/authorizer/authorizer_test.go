package main

import (
	"context"
	"testing"

	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
)

func claimsOf(t *testing.T, permissions ...string) *authorization.Claims {
	t.Helper()
	spec := ""
	for _, p := range permissions {
		spec += "x=" + p + ","
	}
	m, err := parseCertRoles(spec)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := m["x"]; ok {
		return c
	}
	return &authorization.Claims{}
}

func decision(t *testing.T, c *authorization.Claims, method, namespace string) bool {
	t.Helper()
	r, err := toolplaneAuthorizer{}.Authorize(context.Background(), c, &authorization.CallTarget{
		APIName:   api.WorkflowServicePrefix + method,
		Namespace: namespace,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r.Decision == authorization.DecisionAllow
}

func TestDefaultAuthorizerLetsAWriterPoll(t *testing.T) {
	// Why this authorizer exists: with Temporal's, whoever may start a run may poll its task queue.
	writer := claimsOf(t, "default:write")
	for _, m := range []string{"PollWorkflowTaskQueue", "PollActivityTaskQueue", "RespondActivityTaskCompletedById"} {
		r, err := authorization.NewDefaultAuthorizer().Authorize(context.Background(), writer,
			&authorization.CallTarget{APIName: api.WorkflowServicePrefix + m, Namespace: "default"})
		if err != nil || r.Decision != authorization.DecisionAllow {
			t.Fatalf("expected the default authorizer to allow a writer %s, got %v %v", m, r, err)
		}
	}
}

func TestRoles(t *testing.T) {
	starter := claimsOf(t, "default:write")
	operator := claimsOf(t, "default:admin")
	worker := claimsOf(t, "default:worker")
	reader := claimsOf(t, "default:read")
	none := &authorization.Claims{}
	system := claimsOf(t, "temporal-system:admin")

	cases := []struct {
		method string
		allow  map[string]bool
	}{
		// Temporal counts it as a health check: allowed to every caller, even one without claims.
		{"GetSystemInfo", map[string]bool{"starter": true, "operator": true, "worker": true, "reader": true, "none": true, "system": true}},
		{"DescribeNamespace", map[string]bool{"starter": true, "operator": true, "worker": true, "reader": true, "system": true}},
		{"StartWorkflowExecution", map[string]bool{"starter": true, "operator": true, "worker": true, "system": true}},
		{"SignalWithStartWorkflowExecution", map[string]bool{"starter": true, "operator": true, "worker": true, "system": true}},
		{"SignalWorkflowExecution", map[string]bool{"starter": true, "operator": true, "worker": true, "system": true}},
		{"UpdateWorkflowExecution", map[string]bool{"starter": true, "operator": true, "worker": true, "system": true}},
		{"QueryWorkflow", map[string]bool{"starter": true, "operator": true, "worker": true, "reader": true, "system": true}},
		{"GetWorkflowExecutionHistory", map[string]bool{"starter": true, "operator": true, "worker": true, "reader": true, "system": true}},
		{"ListWorkflowExecutions", map[string]bool{"operator": true, "reader": true, "system": true}},
		{"DescribeWorkflowExecution", map[string]bool{"operator": true, "reader": true, "system": true}},
		{"RequestCancelWorkflowExecution", map[string]bool{"operator": true, "system": true}},
		{"TerminateWorkflowExecution", map[string]bool{"operator": true, "system": true}},
		{"ResetWorkflowExecution", map[string]bool{"operator": true, "system": true}},
		{"SetWorkerDeploymentCurrentVersion", map[string]bool{"operator": true, "system": true}},
		{"PollWorkflowTaskQueue", map[string]bool{"worker": true, "system": true}},
		{"PollActivityTaskQueue", map[string]bool{"worker": true, "system": true}},
		{"RespondWorkflowTaskCompleted", map[string]bool{"worker": true, "system": true}},
		{"RespondActivityTaskCompleted", map[string]bool{"worker": true, "system": true}},
		{"RespondActivityTaskCompletedById", map[string]bool{"worker": true, "system": true}},
		{"RecordActivityTaskHeartbeat", map[string]bool{"worker": true, "system": true}},
		{"PollNexusTaskQueue", map[string]bool{"worker": true, "system": true}},
		{"UpdateNamespace", map[string]bool{"operator": true, "system": true}},
	}
	parties := map[string]*authorization.Claims{
		"starter": starter, "operator": operator, "worker": worker, "reader": reader, "none": none, "system": system,
	}
	for _, c := range cases {
		for name, claims := range parties {
			if got := decision(t, claims, c.method, "default"); got != c.allow[name] {
				t.Errorf("%s %s: allowed=%v, want %v", name, c.method, got, c.allow[name])
			}
		}
	}
}

func TestRolesAreNamespaced(t *testing.T) {
	worker := claimsOf(t, "default:worker")
	if decision(t, worker, "PollWorkflowTaskQueue", "other") {
		t.Error("a worker of namespace default polled namespace other")
	}
	if decision(t, claimsOf(t, "default:admin"), "TerminateWorkflowExecution", "other") {
		t.Error("an operator of namespace default terminated a run in namespace other")
	}
}

func TestNoClaimsNoAccess(t *testing.T) {
	if decision(t, nil, "DescribeNamespace", "default") || decision(t, nil, "StartWorkflowExecution", "default") {
		t.Error("a caller without claims was let in")
	}
	r, _ := toolplaneAuthorizer{}.Authorize(context.Background(), nil,
		&authorization.CallTarget{APIName: "/grpc.health.v1.Health/Check"})
	if r.Decision != authorization.DecisionAllow {
		t.Error("the health check is refused")
	}
}

func TestClusterAndAdminAPIs(t *testing.T) {
	operator := claimsOf(t, "default:admin")
	for _, target := range []string{
		api.AdminServicePrefix + "DescribeCluster",
		api.OperatorServicePrefix + "AddOrUpdateRemoteCluster",
		api.WorkflowServicePrefix + "ListNamespaces",
	} {
		r, _ := toolplaneAuthorizer{}.Authorize(context.Background(), operator, &authorization.CallTarget{APIName: target})
		if r.Decision == authorization.DecisionAllow {
			t.Errorf("a namespace operator called %s", target)
		}
	}
	r, _ := toolplaneAuthorizer{}.Authorize(context.Background(), claimsOf(t, "default:worker"),
		&authorization.CallTarget{APIName: api.WorkflowServicePrefix + "GetClusterInfo"})
	if r.Decision != authorization.DecisionAllow {
		t.Error("a worker cannot read the cluster info its SDK asks for")
	}
}
