package podium_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLocksDocumented checks that docs/LOCKS.md lists every sync.Mutex and
// sync.RWMutex of the module's non-test code, and nothing that is gone: the
// lock order is written in one place, and a new lock cannot land without
// its line there.
func TestLocksDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/LOCKS.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		listed[m[1]] = true
	}
	found := mutexes(t, ".")
	if len(found) == 0 {
		t.Fatal("found no mutex in the source: the scan is broken")
	}
	for _, name := range found {
		if !listed[name] {
			t.Errorf("%s is not in docs/LOCKS.md: say what it guards and where it goes in the order", name)
		}
		delete(listed, name)
	}
	for name := range listed {
		t.Errorf("docs/LOCKS.md lists %s, which the source no longer has", name)
	}
}

// mutexes names every mutex declared in the non-test Go files under root:
// dir.Type.field for a struct field (Mutex or RWMutex when embedded), and
// dir.Func.var for a variable (dir.var.field for a package-level variable of
// an anonymous struct type).
func mutexes(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "." {
			dir = "podium"
		}
		out = append(out, fileMutexes(dir, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fileMutexes walks one file, keeping track of the named type or function
// each declaration is in.
func fileMutexes(dir string, f *ast.File) []string {
	var out []string
	fields := func(owner string, st *ast.StructType) {
		for _, fl := range st.Fields.List {
			if kind := mutexType(fl.Type); kind != "" {
				if len(fl.Names) == 0 {
					out = append(out, dir+"."+owner+"."+kind)
				}
				for _, n := range fl.Names {
					out = append(out, dir+"."+owner+"."+n.Name)
				}
			}
		}
	}
	// vars handles a variable declaration in scope (a function or the file).
	vars := func(scope string, vs *ast.ValueSpec) {
		if mutexType(vs.Type) != "" {
			for _, n := range vs.Names {
				out = append(out, dir+"."+scope+"."+n.Name)
			}
		}
		if st, ok := vs.Type.(*ast.StructType); ok && len(vs.Names) == 1 {
			fields(vs.Names[0].Name, st)
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch s := sp.(type) {
				case *ast.TypeSpec:
					if st, ok := s.Type.(*ast.StructType); ok {
						fields(s.Name.Name, st)
					}
				case *ast.ValueSpec:
					vars(dir, s)
				}
			}
		case *ast.FuncDecl:
			if d.Body == nil {
				continue
			}
			ast.Inspect(d.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.TypeSpec:
					if st, ok := x.Type.(*ast.StructType); ok {
						fields(x.Name.Name, st)
					}
				case *ast.ValueSpec:
					vars(d.Name.Name, x)
				}
				return true
			})
		}
	}
	return out
}

// mutexType is "Mutex" or "RWMutex" if e is sync.Mutex or sync.RWMutex.
func mutexType(e ast.Expr) string {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "sync" {
		return ""
	}
	if sel.Sel.Name == "Mutex" || sel.Sel.Name == "RWMutex" {
		return sel.Sel.Name
	}
	return ""
}
