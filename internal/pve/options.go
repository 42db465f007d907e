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

// Connection holds the connection options, decoded by module.Declare; a module's options struct
// embeds it.
type Connection struct {
	Host          string `opt:"api_host"`
	Port          int    `opt:"api_port"`
	User          string `opt:"api_user"`
	TokenID       string `opt:"api_token_id"`
	TokenSecret   string `opt:"api_token_secret"`
	ValidateCerts bool   `opt:"validate_certs"`
	CAPath        string `opt:"ca_path"`
	Timeout       int    `opt:"api_timeout"`
}

// Client builds a client from the connection options; m masks the token secret everywhere.
func (o Connection) Client(m *module.Module) (*Client, error) {
	m.AddSecret(o.TokenSecret)
	return New(Config{
		Host:          o.Host,
		Port:          o.Port,
		User:          o.User,
		TokenID:       o.TokenID,
		TokenSecret:   o.TokenSecret,
		ValidateCerts: o.ValidateCerts,
		CAPath:        o.CAPath,
		Timeout:       time.Duration(o.Timeout) * time.Second,
		// One Client per module run: a list read by two steps of the run is read once.
		CacheReads: true,
	})
}
