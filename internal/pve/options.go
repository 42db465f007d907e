package pve

import (
	"time"

	"github.com/deevnet/tenant/internal/module"
)

// ConnectionOptions returns the connection options every PVE module merges into its spec.
// Names and environment fallbacks are community.proxmox's, so one module_defaults group serves
// both collections. Only API tokens are supported: a token can be scoped, a password cannot.
func ConnectionOptions() map[string]*module.Option {
	return map[string]*module.Option{
		"api_host":         {Type: module.TypeStr, Required: true, EnvFallback: []string{"PROXMOX_HOST"}},
		"api_port":         {Type: module.TypeInt, Default: 8006, EnvFallback: []string{"PROXMOX_PORT"}},
		"api_user":         {Type: module.TypeStr, Required: true, EnvFallback: []string{"PROXMOX_USER"}},
		"api_token_id":     {Type: module.TypeStr, Required: true, EnvFallback: []string{"PROXMOX_TOKEN_ID"}},
		"api_token_secret": {Type: module.TypeStr, Required: true, NoLog: true, EnvFallback: []string{"PROXMOX_TOKEN_SECRET"}},
		"validate_certs":   {Type: module.TypeBool, Default: true, EnvFallback: []string{"PROXMOX_VALIDATE_CERTS"}},
		"ca_path":          {Type: module.TypePath},
		"api_timeout":      {Type: module.TypeInt, Default: 30},
	}
}

// WithConnectionOptions returns opts plus the connection options (opts wins on a clash).
func WithConnectionOptions(opts map[string]*module.Option) map[string]*module.Option {
	all := ConnectionOptions()
	for k, v := range opts {
		all[k] = v
	}
	return all
}

// FromModule builds a client from a module's validated connection options.
func FromModule(m *module.Module) (*Client, error) {
	m.AddSecret(m.Str("api_token_secret"))
	return New(Config{
		Host:          m.Str("api_host"),
		Port:          m.Int("api_port"),
		User:          m.Str("api_user"),
		TokenID:       m.Str("api_token_id"),
		TokenSecret:   m.Str("api_token_secret"),
		ValidateCerts: m.Bool("validate_certs"),
		CAPath:        m.Str("ca_path"),
		Timeout:       time.Duration(m.Int("api_timeout")) * time.Second,
		// One Client per module run: a list read by two steps of the run is read once.
		CacheReads: true,
	})
}
