package main

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v4"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// fileKeyProvider serves the public keys of JWKS files (`file:///path` in
// jwtKeyProvider.keySourceURIs), read at start and again every refresh interval. Temporal's own
// provider fetches http(s) URIs only; a team's issuer with a JWKS URL uses that one instead.
type fileKeyProvider struct {
	paths  []string
	logger log.Logger
	mu     sync.RWMutex
	rsa    map[string]*rsa.PublicKey
	ec     map[string]*ecdsa.PublicKey
	stop   chan struct{}
}

var _ authorization.TokenKeyProvider = (*fileKeyProvider)(nil)

// filePaths returns the paths of file:// URIs, and whether every URI is one.
func filePaths(uris []string) ([]string, bool) {
	var paths []string
	for _, u := range uris {
		u = strings.TrimSpace(u)
		if u == "" {
			continue
		}
		p, ok := strings.CutPrefix(u, "file://")
		if !ok {
			return nil, false
		}
		paths = append(paths, p)
	}
	return paths, len(paths) > 0
}

func newFileKeyProvider(paths []string, refresh time.Duration, logger log.Logger) (*fileKeyProvider, error) {
	p := &fileKeyProvider{paths: paths, logger: logger, stop: make(chan struct{})}
	if err := p.load(); err != nil {
		return nil, err
	}
	if refresh > 0 {
		go func() {
			t := time.NewTicker(refresh)
			defer t.Stop()
			for {
				select {
				case <-p.stop:
					return
				case <-t.C:
					if err := p.load(); err != nil {
						logger.Error("reloading the JWKS files failed; keeping the keys read before", tag.Error(err))
					}
				}
			}
		}()
	}
	return p, nil
}

func (p *fileKeyProvider) load() error {
	rsaKeys := map[string]*rsa.PublicKey{}
	ecKeys := map[string]*ecdsa.PublicKey{}
	for _, path := range p.paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("JWKS file %s: %w", path, err)
		}
		var set jose.JSONWebKeySet
		if err := json.Unmarshal(data, &set); err != nil {
			return fmt.Errorf("JWKS file %s is not a JSON Web Key Set: %w", path, err)
		}
		for _, k := range set.Keys {
			switch key := k.Key.(type) {
			case *rsa.PublicKey:
				rsaKeys[k.KeyID] = key
			case *ecdsa.PublicKey:
				ecKeys[k.KeyID] = key
			default:
				return fmt.Errorf("JWKS file %s: key %q is neither an RSA nor an EC public key", path, k.KeyID)
			}
		}
	}
	p.mu.Lock()
	p.rsa, p.ec = rsaKeys, ecKeys
	p.mu.Unlock()
	return nil
}

func (p *fileKeyProvider) RsaKey(alg string, kid string) (*rsa.PublicKey, error) {
	if !strings.EqualFold(alg, jwt.SigningMethodRS256.Name) {
		return nil, fmt.Errorf("unexpected signing algorithm %s", alg)
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if k, ok := p.rsa[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("no RSA key %q in the JWKS files", kid)
}

func (p *fileKeyProvider) EcdsaKey(alg string, kid string) (*ecdsa.PublicKey, error) {
	if !strings.EqualFold(alg, jwt.SigningMethodES256.Name) {
		return nil, fmt.Errorf("unexpected signing algorithm %s", alg)
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if k, ok := p.ec[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("no EC key %q in the JWKS files", kid)
}

func (p *fileKeyProvider) HmacKey(alg string, _ string) ([]byte, error) {
	return nil, fmt.Errorf("HMAC tokens (%s) are not accepted", alg)
}

func (p *fileKeyProvider) SupportedMethods() []string {
	return []string{jwt.SigningMethodRS256.Name, jwt.SigningMethodES256.Name}
}

func (p *fileKeyProvider) Close() { close(p.stop) }
