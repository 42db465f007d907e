package module

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// A module's options are read through a struct declared next to its spec: each field carries
// the option's name in an `opt:"name"` tag (or, failing that, a json tag), and Declare decodes the validated parameters into it
// before the handler runs. Entry.Check proves, in each module's tests, that the struct and the
// spec name the same options with matching types, so a misspelt option fails a test instead of
// reading "" at run time.
//
// Go types per option type: str and path → string, int → int, bool → bool, float → float64,
// raw → any, dict → a struct of its suboptions (map[string]any without suboptions), list → a
// slice of the element type (a struct per dict with suboptions). A pointer field is nil when the
// option is unset and has no default; Opt[T] also tells a value the user gave from the default.
// An embedded struct contributes its fields (the PVE connection options, say).

// Opt is an option whose handler must tell a value the user gave (directly, by alias or by
// environment fallback) from its default.
type Opt[T any] struct {
	Value T
	Set   bool
}

func (Opt[T]) isOpt() {}

// optional is implemented by every Opt[T]; reflection finds the wrapper through it.
type optional interface{ isOpt() }

// TypedHandler is a handler that reads its options from a decoded struct.
type TypedHandler[T any] func(m *Module, o *T) (Result, error)

// Declare makes a module's Entry from its spec and a handler of typed options. The options are
// decoded from the validated parameters on every run; a struct that does not match the spec
// fails the run (and Entry.Check fails the module's tests first).
func Declare[T any](spec Spec, h TypedHandler[T]) Entry {
	return Entry{Spec: spec, Options: reflect.TypeFor[T](), Handler: func(m *Module) (Result, error) {
		var o T
		d := decoder{given: m.given}
		if err := d.fields(reflect.ValueOf(&o).Elem(), spec.Options, m.params, ""); err != nil {
			return Result{}, fmt.Errorf("module %s: its options struct does not match its spec: %w", m.Name, err)
		}
		return h(m, &o)
	}}
}

// Check reports every disagreement between e's spec and its options struct: an option without
// a field, a field (tag) without an option, or a Go type that cannot hold the option's values.
func (e Entry) Check() error {
	if e.Options == nil {
		return errors.New("declared without an options struct: use module.Declare")
	}
	if e.Options.Kind() != reflect.Struct {
		return fmt.Errorf("options type %s is not a struct", e.Options)
	}
	return checkStruct(e.Options, e.Spec.Options, "")
}

// field is one tagged field of an options struct, embedded structs flattened.
type field struct {
	name  string // the option's name, from the tag
	index []int
	typ   reflect.Type
}

func fieldsOf(t reflect.Type) ([]field, error) {
	var out []field
	var errs []error
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			inner, err := fieldsOf(f.Type)
			errs = append(errs, err)
			for _, in := range inner {
				in.index = append([]int{i}, in.index...)
				out = append(out, in)
			}
			continue
		}
		tag, ok := optName(f.Tag)
		switch {
		case !f.IsExported():
			errs = append(errs, fmt.Errorf("field %s.%s is not exported", t, f.Name))
		case !ok || tag == "":
			errs = append(errs, fmt.Errorf("field %s.%s has no opt (or json) tag", t, f.Name))
		default:
			out = append(out, field{name: tag, index: []int{i}, typ: f.Type})
		}
	}
	return out, errors.Join(errs...)
}

// optName is a field's option name: its opt tag, else the name of its json tag, so that a
// domain type already shaped like the option (report.Check, say) serves as the option's struct.
func optName(tag reflect.StructTag) (string, bool) {
	if name, ok := tag.Lookup("opt"); ok {
		return name, true
	}
	name, _, _ := strings.Cut(tag.Get("json"), ",")
	return name, name != "" && name != "-"
}

func checkStruct(t reflect.Type, opts map[string]*Option, path string) error {
	fields, err := fieldsOf(t)
	errs := []error{err}
	seen := map[string]bool{}
	for _, f := range fields {
		p := join(path, f.name)
		o, ok := opts[f.name]
		switch {
		case seen[f.name]:
			errs = append(errs, fmt.Errorf("%s: two fields of %s are tagged with it", p, t))
		case !ok:
			errs = append(errs, fmt.Errorf("%s: field of %s names no option of the spec", p, t))
		default:
			errs = append(errs, checkType(f.typ, o.Type, o, p))
		}
		seen[f.name] = true
	}
	for _, name := range sortedKeys(opts) {
		if !seen[name] {
			errs = append(errs, fmt.Errorf("%s: option of the spec has no field in %s", join(path, name), t))
		}
	}
	return errors.Join(errs...)
}

// checkType checks that t can hold the values of an option of type ot (o gives the elements
// and suboptions).
func checkType(t reflect.Type, ot Type, o *Option, path string) error {
	if reflect.PointerTo(t).Implements(reflect.TypeFor[optional]()) && t.Kind() == reflect.Struct {
		t = t.Field(0).Type
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want := map[Type]reflect.Type{
		TypeStr: reflect.TypeFor[string](), TypePath: reflect.TypeFor[string](), "": reflect.TypeFor[string](),
		TypeInt: reflect.TypeFor[int](), TypeBool: reflect.TypeFor[bool](), TypeFloat: reflect.TypeFor[float64](),
		TypeRaw: reflect.TypeFor[any](),
	}
	switch ot {
	case TypeDict:
		if o.Options != nil {
			if t.Kind() != reflect.Struct {
				return fmt.Errorf("%s: a dict with suboptions needs a struct, not %s", path, t)
			}
			return checkStruct(t, o.Options, path)
		}
		if t != reflect.TypeFor[map[string]any]() {
			return fmt.Errorf("%s: a dict needs map[string]any, not %s", path, t)
		}
		return nil
	case TypeList:
		if t.Kind() != reflect.Slice {
			return fmt.Errorf("%s: a list needs a slice, not %s", path, t)
		}
		et := o.Elements
		if et == "" {
			et = TypeRaw
		}
		return checkType(t.Elem(), et, o, path+"[]")
	}
	w, known := want[ot]
	switch {
	case !known:
		return fmt.Errorf("%s: unknown option type %q", path, ot)
	case t != w:
		return fmt.Errorf("%s: a %s option needs %s, not %s", path, ot, w, t)
	}
	return nil
}

// decoder copies validated parameters into an options struct.
type decoder struct {
	given map[string]bool // by path, as the validator records it
}

func (d decoder) fields(dst reflect.Value, opts map[string]*Option, params map[string]any, path string) error {
	fields, err := fieldsOf(dst.Type())
	if err != nil {
		return err
	}
	for _, f := range fields {
		o, ok := opts[f.name]
		if !ok {
			return fmt.Errorf("%s: no such option", join(path, f.name))
		}
		p := join(path, f.name)
		if err := d.value(dst.FieldByIndex(f.index), o.Type, o, params[f.name], p); err != nil {
			return err
		}
	}
	return nil
}

func (d decoder) value(dst reflect.Value, ot Type, o *Option, val any, path string) error {
	if dst.Kind() == reflect.Struct && dst.Addr().Type().Implements(reflect.TypeFor[optional]()) {
		dst.Field(1).SetBool(d.given[path])
		dst = dst.Field(0)
	}
	if val == nil {
		return nil // the zero value: unset, no default
	}
	if dst.Kind() == reflect.Pointer {
		dst.Set(reflect.New(dst.Type().Elem()))
		dst = dst.Elem()
	}
	switch {
	case ot == TypeDict && o.Options != nil:
		m, ok := val.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: a %T, not a dict", path, val)
		}
		return d.fields(dst, o.Options, m, path)
	case ot == TypeList:
		l, ok := val.([]any)
		if !ok {
			return fmt.Errorf("%s: a %T, not a list", path, val)
		}
		et := o.Elements
		if et == "" {
			et = TypeRaw
		}
		s := reflect.MakeSlice(dst.Type(), len(l), len(l))
		for i, e := range l {
			if err := d.value(s.Index(i), et, o, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		dst.Set(s)
		return nil
	}
	v := reflect.ValueOf(val)
	if dst.Kind() == reflect.Interface {
		dst.Set(v)
		return nil
	}
	if !v.Type().AssignableTo(dst.Type()) {
		return fmt.Errorf("%s: a %T cannot be stored in %s", path, val, dst.Type())
	}
	dst.Set(v)
	return nil
}
