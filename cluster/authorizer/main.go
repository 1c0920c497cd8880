// toolplane-temporal-server: Temporal's server (go.temporal.io/server, the version go.mod pins)
// with toolplane's authorizer, for the native cluster (`npm run cluster`) and docker-compose.yml.
// It takes the arguments of Temporal's own `temporal-server`:
//
//	toolplane-temporal-server [--root .] [--config config] [--env development] [--allow-no-auth] start --service frontend [--service ...]
//
// The config's global.authorization.authorizer chooses: "toolplane" (authorizer.go, with
// claims.go's claim mapper), "default" (Temporal's), or "" (none; only with --allow-no-auth).
// TOOLPLANE_CERT_ROLES gives roles to token-less callers by certificate common name.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the cluster's database
	"go.temporal.io/server/temporal"
)

type args struct {
	root, config, env string
	allowNoAuth       bool
	services          []string
}

func parseArgs(argv []string) (args, error) {
	a := args{root: ".", config: "config", env: "development"}
	started := false
	for i := 0; i < len(argv); i++ {
		flag := argv[i]
		value := func() (string, error) {
			if i+1 >= len(argv) {
				return "", fmt.Errorf("%s needs a value", flag)
			}
			i++
			return argv[i], nil
		}
		var err error
		switch flag {
		case "--root", "-r":
			a.root, err = value()
		case "--config", "-c":
			a.config, err = value()
		case "--env", "-e":
			a.env, err = value()
		case "--allow-no-auth":
			a.allowNoAuth = true
		case "start":
			started = true
		case "--service", "--svc":
			var s string
			s, err = value()
			a.services = append(a.services, s)
		default:
			return a, fmt.Errorf("unknown argument %q", flag)
		}
		if err != nil {
			return a, err
		}
	}
	if !started {
		return a, errors.New("nothing to do: the command is `start`")
	}
	if len(a.services) == 0 {
		a.services = temporal.DefaultServices
	}
	return a, nil
}

// authorization picks the authorizer and claim mapper the config names.
func authorizationFor(cfg *config.Config, allowNoAuth bool, logger log.Logger) (authorization.Authorizer, authorization.ClaimMapper, error) {
	auth := &cfg.Global.Authorization
	switch auth.Authorizer {
	case "toolplane":
		var keys authorization.TokenKeyProvider
		if paths, ok := filePaths(auth.JWTKeyProvider.KeySourceURIs); ok {
			p, err := newFileKeyProvider(paths, auth.JWTKeyProvider.RefreshInterval, logger)
			if err != nil {
				return nil, nil, err
			}
			keys = p
		} else if auth.JWTKeyProvider.HasSourceURIsConfigured() {
			keys = authorization.NewDefaultTokenKeyProvider(auth, logger)
		} else {
			return nil, nil, errors.New("authorizer toolplane: global.authorization.jwtKeyProvider.keySourceURIs names no JWKS")
		}
		certRoles, err := parseCertRoles(os.Getenv("TOOLPLANE_CERT_ROLES"))
		if err != nil {
			return nil, nil, fmt.Errorf("TOOLPLANE_CERT_ROLES: %w", err)
		}
		mapper := &claimMapper{jwt: authorization.NewDefaultJWTClaimMapper(keys, auth, logger), certRoles: certRoles}
		return toolplaneAuthorizer{}, mapper, nil
	case "":
		if !allowNoAuth {
			return nil, nil, errors.New("the config names no authorizer (global.authorization.authorizer): anyone who reaches the frontend could do anything; pass --allow-no-auth to run it open anyway")
		}
		return authorization.NewNoopAuthorizer(), authorization.NewNoopClaimMapper(), nil
	default:
		a, err := authorization.GetAuthorizerFromConfig(auth)
		if err != nil {
			return nil, nil, err
		}
		m, err := authorization.GetClaimMapperFromConfig(auth, logger)
		return a, m, err
	}
}

func run(argv []string) error {
	a, err := parseArgs(argv)
	if err != nil {
		return err
	}
	cfg, err := config.LoadConfig(a.env, filepath.Join(a.root, a.config), "")
	if err != nil {
		return fmt.Errorf("loading the config: %w", err)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	var dc dynamicconfig.Client = dynamicconfig.NewNoopClient()
	if cfg.DynamicConfigClient != nil {
		dc, err = dynamicconfig.NewFileBasedClient(cfg.DynamicConfigClient, logger, temporal.InterruptCh())
		if err != nil {
			return fmt.Errorf("dynamic config: %w", err)
		}
	}
	authorizer, claimMapper, err := authorizationFor(cfg, a.allowNoAuth, logger)
	if err != nil {
		return err
	}
	audience, err := authorization.GetAudienceMapperFromConfig(&cfg.Global.Authorization)
	if err != nil {
		return err
	}
	s, err := temporal.NewServer(
		temporal.ForServices(a.services),
		temporal.WithConfig(cfg),
		temporal.WithDynamicConfigClient(dc),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithAudienceGetter(func(*config.Config) authorization.JWTAudienceMapper { return audience }),
	)
	if err != nil {
		return fmt.Errorf("creating the server: %w", err)
	}
	return s.Start()
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "toolplane-temporal-server: %v\n", err)
		os.Exit(1)
	}
}
