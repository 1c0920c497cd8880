package main

import (
	"context"

	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
)

// Temporal's default authorizer ranks roles worker < reader < writer < admin and asks a writer for
// PollWorkflowTaskQueue and PollActivityTaskQueue (common/api/metadata.go): whoever may start a run
// may also poll any task queue and complete tasks. This authorizer reads the same role bits
// (Temporal's JWT claim mapper sets them from `permissions: ["<namespace>:<role>"]`) as three
// separate parties instead of a ladder:
//
//	write  the run starter: start, signal, update, query a run and read its history (its result)
//	admin  the operator: everything in its namespace except the task-queue RPCs of workers
//	worker the worker: poll and answer task queues, plus what a starter may (activities use a client)
//	read   an observer (the Web UI): the read-only APIs
//
// A system-level admin (`temporal-system:admin`, or Temporal's own worker service by its
// certificate) may do everything. Every caller with any role may read the server's and the
// namespace's description, which every SDK asks for when it connects.
type toolplaneAuthorizer struct{}

var _ authorization.Authorizer = toolplaneAuthorizer{}

var (
	allow = authorization.Result{Decision: authorization.DecisionAllow}
	deny  = authorization.Result{Decision: authorization.DecisionDeny}
)

// taskQueueAPIs are the RPCs of a worker: taking tasks off a task queue and answering them.
// Whoever holds them can run any code under any workflow type on those queues, and complete any
// activity (the *ById variants by workflow id alone).
var taskQueueAPIs = set(
	"PollWorkflowTaskQueue", "RespondWorkflowTaskCompleted", "RespondWorkflowTaskFailed",
	"RespondQueryTaskCompleted", "ResetStickyTaskQueue",
	"PollActivityTaskQueue", "RecordActivityTaskHeartbeat", "RecordActivityTaskHeartbeatById",
	"RespondActivityTaskCompleted", "RespondActivityTaskCompletedById",
	"RespondActivityTaskFailed", "RespondActivityTaskFailedById",
	"RespondActivityTaskCanceled", "RespondActivityTaskCanceledById",
	"PollNexusTaskQueue", "RespondNexusTaskCompleted", "RespondNexusTaskFailed",
	"ShutdownWorker", "RecordWorkerHeartbeat", "FetchWorkerConfig",
)

// starterAPIs are what a run starter needs: start a run, talk to it, and follow it to its result.
var starterAPIs = set(
	"StartWorkflowExecution", "SignalWithStartWorkflowExecution", "ExecuteMultiOperation",
	"SignalWorkflowExecution", "UpdateWorkflowExecution", "PollWorkflowExecutionUpdate",
	"QueryWorkflow", "GetWorkflowExecutionHistory",
)

// connectAPIs describe the server and the namespace: every SDK asks for them when it connects.
// (GetSystemInfo needs no role at all: Temporal counts it as a health check.)
var connectAPIs = set("GetClusterInfo", "DescribeNamespace", "ListSearchAttributes", "GetSearchAttributes")

func set(names ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		m[n] = struct{}{}
	}
	return m
}

func has(m map[string]struct{}, name string) bool {
	_, ok := m[name]
	return ok
}

func (toolplaneAuthorizer) Authorize(_ context.Context, claims *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	if authorization.IsHealthCheckAPI(target.APIName) {
		return allow, nil
	}
	if claims == nil {
		return deny, nil
	}
	if claims.System&authorization.RoleAdmin != 0 {
		return allow, nil
	}
	md := api.GetMethodMetadata(target.APIName)
	method := api.MethodName(target.APIName)
	var role authorization.Role
	switch md.Scope {
	case api.ScopeNamespace:
		role = claims.System | claims.Namespaces[target.Namespace]
	case api.ScopeCluster:
		// Cluster-wide: only the description every SDK reads on connect, to a caller holding any role.
		if has(connectAPIs, method) && (claims.System != 0 || anyRole(claims)) {
			return allow, nil
		}
		if md.Access == api.AccessReadOnly && claims.System&authorization.RoleReader != 0 {
			return allow, nil
		}
		return deny, nil
	default:
		return deny, nil
	}
	if role == authorization.RoleUndefined {
		return deny, nil
	}
	if has(connectAPIs, method) {
		return allow, nil
	}
	if has(taskQueueAPIs, method) {
		return decide(role&authorization.RoleWorker != 0), nil
	}
	if has(starterAPIs, method) && role&(authorization.RoleWriter|authorization.RoleWorker) != 0 {
		return allow, nil
	}
	if role&authorization.RoleAdmin != 0 {
		return allow, nil
	}
	return decide(md.Access == api.AccessReadOnly && role&authorization.RoleReader != 0), nil
}

func anyRole(claims *authorization.Claims) bool {
	for _, r := range claims.Namespaces {
		if r != authorization.RoleUndefined {
			return true
		}
	}
	return false
}

func decide(ok bool) authorization.Result {
	if ok {
		return allow
	}
	return deny
}
