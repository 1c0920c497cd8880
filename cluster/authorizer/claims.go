package main

import (
	"fmt"
	"strings"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/primitives"
)

// claimMapper gives a caller its roles. A bearer token (a JWT, as the SDKs' API key) is read by
// Temporal's own JWT claim mapper: signature against the JWKS keys, expiry, audience, and the
// `permissions` claim. A caller without a token gets roles only from its client certificate's
// common name, and only for the names listed in certRoles: Temporal's own worker service and the
// Web UI, which connect with certificates of the cluster's CA and carry no token. Anyone else
// without a token gets no role, and the authorizer refuses everything but the health check.
type claimMapper struct {
	jwt       authorization.ClaimMapper
	certRoles map[string]*authorization.Claims
}

var _ authorization.ClaimMapper = (*claimMapper)(nil)

func (m *claimMapper) GetClaims(info *authorization.AuthInfo) (*authorization.Claims, error) {
	if info.AuthToken != "" {
		return m.jwt.GetClaims(info)
	}
	// The interceptor sets TLSSubject only from a verified chain (authorization.PeerCert).
	if info.TLSSubject != nil {
		if c, ok := m.certRoles[info.TLSSubject.CommonName]; ok {
			claims := *c
			return &claims, nil
		}
	}
	return &authorization.Claims{}, nil
}

// parseCertRoles reads `<common name>=<permission>[,...]`, each permission written as in a token's
// `permissions` claim (`<namespace>:<role>`, `temporal-system` for the whole cluster).
func parseCertRoles(spec string) (map[string]*authorization.Claims, error) {
	out := map[string]*authorization.Claims{}
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		cn, permission, ok := strings.Cut(entry, "=")
		if !ok || cn == "" {
			return nil, fmt.Errorf("certificate role %q is not <common name>=<namespace>:<role>", entry)
		}
		namespace, roleName, ok := strings.Cut(permission, ":")
		role := roleOf(roleName)
		if !ok || namespace == "" || role == authorization.RoleUndefined {
			return nil, fmt.Errorf("certificate role %q: %q is not <namespace>:<read|write|worker|admin>", entry, permission)
		}
		c := out[cn]
		if c == nil {
			c = &authorization.Claims{Subject: "cert:" + cn}
			out[cn] = c
		}
		if namespace == primitives.SystemLocalNamespace {
			c.System |= role
		} else {
			if c.Namespaces == nil {
				c.Namespaces = map[string]authorization.Role{}
			}
			c.Namespaces[namespace] |= role
		}
	}
	return out, nil
}

// roleOf: the role words of Temporal's JWT claim mapper.
func roleOf(name string) authorization.Role {
	switch strings.ToLower(name) {
	case "read":
		return authorization.RoleReader
	case "write":
		return authorization.RoleWriter
	case "worker":
		return authorization.RoleWorker
	case "admin":
		return authorization.RoleAdmin
	}
	return authorization.RoleUndefined
}
