package pvesim

// IPAM and DNS objects: read-only here, and not versioned (no pending/running).

// pluginRoutes: the IPAM and DNS plugins, read-only (a nil crud handler answers 501).
func (s *Server) pluginRoutes() routes {
	rs := routes{}
	for kind, id := range map[string]string{"ipams": "ipam", "dns": "dns"} {
		rs.add(collection("/cluster/sdn/"+kind, id, crud{list: s.pluginList(kind), get: s.pluginGet(kind, id)}))
	}
	return rs
}

// plugins are the IPAM or DNS plugin objects of kind ("ipams", "dns"), as the API shows them: a
// DNS plugin's API key is a secret and never shown.
func (s *Server) plugins(kind string) map[string]sdnObj {
	if kind == "ipams" {
		return s.st.SDN.IPAMs
	}
	out := make(map[string]sdnObj, len(s.st.SDN.DNS))
	for id, o := range s.st.SDN.DNS {
		c := copyObj(o)
		delete(c, "key")
		out[id] = c
	}
	return out
}

func (s *Server) pluginList(kind string) handlerFunc {
	return func(r *reqCtx) (any, error) {
		objs := s.plugins(kind)
		out := []sdnObj{}
		for _, id := range sortedKeys(objs) {
			if s.st.has(r.who, "/sdn/"+kind+"/"+id, []string{"SDN.Audit", "SDN.Allocate"}, true) {
				out = append(out, objs[id])
			}
		}
		return out, nil
	}
}

// pluginGet reads one plugin; param names its id in the path ("ipam", "dns").
func (s *Server) pluginGet(kind, param string) handlerFunc {
	return func(r *reqCtx) (any, error) {
		id := r.params.Str(param)
		o, ok := s.plugins(kind)[id]
		if !ok {
			return nil, plainErr("sdn '%s' does not exist", id)
		}
		return o, nil
	}
}
