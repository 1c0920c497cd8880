package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509/pkix"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v4"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
)

type issuer struct {
	key *ecdsa.PrivateKey
	kid string
}

func newIssuer(t *testing.T, dir string) (issuer, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is := issuer{key: key, kid: "test-key"}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: is.kid, Algorithm: "ES256", Use: "sig"}}}
	data, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return is, file
}

func (is issuer) token(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = is.kid
	s, err := tok.SignedString(is.key)
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + s
}

func mapper(t *testing.T, jwksFile string, certRoles string) *claimMapper {
	t.Helper()
	keys, err := newFileKeyProvider([]string{jwksFile}, 0, log.NewNoopLogger())
	if err != nil {
		t.Fatal(err)
	}
	roles, err := parseCertRoles(certRoles)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Authorization{}
	return &claimMapper{jwt: authorization.NewDefaultJWTClaimMapper(keys, cfg, log.NewNoopLogger()), certRoles: roles}
}

func TestTokenRoles(t *testing.T) {
	is, file := newIssuer(t, t.TempDir())
	m := mapper(t, file, "")
	exp := time.Now().Add(time.Hour).Unix()
	c, err := m.GetClaims(&authorization.AuthInfo{AuthToken: is.token(t, jwt.MapClaims{
		"sub": "run-starter", "exp": exp, "permissions": []string{"default:write"},
	})})
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != "run-starter" || c.Namespaces["default"] != authorization.RoleWriter || c.System != 0 {
		t.Fatalf("unexpected claims %+v", c)
	}
}

func TestTokenRefusals(t *testing.T) {
	dir := t.TempDir()
	is, file := newIssuer(t, dir)
	m := mapper(t, file, "")
	other, _ := newIssuer(t, t.TempDir()) // same kid, another key: a forged token
	expired := is.token(t, jwt.MapClaims{"sub": "s", "exp": time.Now().Add(-time.Minute).Unix(), "permissions": []string{"default:admin"}})
	forged := other.token(t, jwt.MapClaims{"sub": "s", "exp": time.Now().Add(time.Hour).Unix(), "permissions": []string{"default:admin"}})
	for name, token := range map[string]string{"expired": expired, "forged": forged, "not a bearer": "Basic abc"} {
		if _, err := m.GetClaims(&authorization.AuthInfo{AuthToken: token}); err == nil {
			t.Errorf("%s token accepted", name)
		}
	}
}

func TestCertificateRolesOnlyWithoutToken(t *testing.T) {
	is, file := newIssuer(t, t.TempDir())
	m := mapper(t, file, "temporal-system=temporal-system:admin,temporal-ui=temporal-system:read")
	sys, err := m.GetClaims(&authorization.AuthInfo{TLSSubject: &pkix.Name{CommonName: "temporal-system"}})
	if err != nil || sys.System != authorization.RoleAdmin {
		t.Fatalf("system worker certificate: %+v %v", sys, err)
	}
	anon, err := m.GetClaims(&authorization.AuthInfo{TLSSubject: &pkix.Name{CommonName: "toolplane-client"}})
	if err != nil || anon.System != 0 || len(anon.Namespaces) != 0 {
		t.Fatalf("a client certificate alone gave roles: %+v %v", anon, err)
	}
	// With a token, the token alone decides, whatever the certificate.
	withToken, err := m.GetClaims(&authorization.AuthInfo{
		TLSSubject: &pkix.Name{CommonName: "temporal-system"},
		AuthToken:  is.token(t, jwt.MapClaims{"sub": "s", "exp": time.Now().Add(time.Hour).Unix(), "permissions": []string{"default:write"}}),
	})
	if err != nil || withToken.System != 0 || withToken.Namespaces["default"] != authorization.RoleWriter {
		t.Fatalf("token with a system certificate: %+v %v", withToken, err)
	}
}

func TestParseCertRolesRefusesNonsense(t *testing.T) {
	for _, spec := range []string{"x", "x=default", "x=default:root", "=default:read"} {
		if _, err := parseCertRoles(spec); err == nil {
			t.Errorf("%q accepted", spec)
		}
	}
}

func TestArgs(t *testing.T) {
	a, err := parseArgs([]string{"--root", "/r", "--config", "config", "--env", "toolplane", "start", "--service", "frontend"})
	if err != nil || a.root != "/r" || a.env != "toolplane" || len(a.services) != 1 || a.services[0] != "frontend" {
		t.Fatalf("%+v %v", a, err)
	}
	if _, err := parseArgs([]string{"--root"}); err == nil {
		t.Error("a flag without its value accepted")
	}
}
