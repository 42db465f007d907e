package pvesim

// IPAM and DNS objects: read-only here, and not versioned (no pending/running).

func (s *Server) ipamList(r *reqCtx) (any, error) {
	out := []sdnObj{}
	for _, id := range sortedKeys(s.st.SDN.IPAMs) {
		if s.st.has(r.who, "/sdn/ipams/"+id, []string{"SDN.Audit", "SDN.Allocate"}, true) {
			out = append(out, s.st.SDN.IPAMs[id])
		}
	}
	return out, nil
}

func (s *Server) dnsList(r *reqCtx) (any, error) {
	out := []sdnObj{}
	for _, id := range sortedKeys(s.st.SDN.DNS) {
		if s.st.has(r.who, "/sdn/dns/"+id, []string{"SDN.Audit", "SDN.Allocate"}, true) {
			o := copyObj(s.st.SDN.DNS[id])
			delete(o, "key")
			out = append(out, o)
		}
	}
	return out, nil
}

func (s *Server) ipamGet(r *reqCtx) (any, error) {
	id := r.params.Str("ipam")
	o, ok := s.st.SDN.IPAMs[id]
	if !ok {
		return nil, plainErr("sdn '%s' does not exist", id)
	}
	return o, nil
}

func (s *Server) dnsGet(r *reqCtx) (any, error) {
	id := r.params.Str("dns")
	o, ok := s.st.SDN.DNS[id]
	if !ok {
		return nil, plainErr("sdn '%s' does not exist", id)
	}
	c := copyObj(o)
	delete(c, "key") // the API key is a secret
	return c, nil
}
