package sqlstore

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestShared measures what the stores share (docs/ARCHITECTURE.md, "SQL
// shared between the stores") and fails when a complete statement is
// written in both stores with the same text once $n becomes ?: such a
// statement belongs here. Fragments that a store completes at run time
// (a table or a WHERE clause added to them) are counted, not refused.
func TestShared(t *testing.T) {
	lite, pg := statements(t, "../../sqlite"), statements(t, "../../postgres")
	shared, same := 0, 0
	for text, st := range lite {
		if st.shared {
			shared++
			continue
		}
		other, ok := pg[text]
		if !ok {
			continue
		}
		same++
		if !st.fragment && !other.fragment {
			t.Errorf("written in both stores, share it in internal/sqlstore: %s (sqlite %s, postgres %s)", text, st.at, other.at)
		}
	}
	t.Logf("sqlstore: %d statements; sqlite: %d statements, %d of its own; postgres: %d, %d of its own; %d identical texts left (fragments)",
		shared, len(lite), len(lite)-shared, len(pg), len(pg)-shared, same)
}

type statement struct {
	at       string // file:line of the first occurrence
	fragment bool   // completed at run time
	shared   bool   // a sqlstore statement
}

var (
	sqlVerb     = regexp.MustCompile(`^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|PRAGMA|VACUUM)\b`)
	placeholder = regexp.MustCompile(`\$[0-9]+`)
	space       = regexp.MustCompile(`\s+`)
)

// statements returns the SQL of the non-test files of a package: each
// largest constant string expression that starts with a SQL verb, with its
// placeholders written ? and its spaces collapsed, and each use of a
// sqlstore statement (as "sqlstore.Name").
func statements(t *testing.T, dir string) map[string]statement {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	consts := map[string]ast.Expr{}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							consts[n.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	var fold func(e ast.Expr) (string, bool)
	fold = func(e ast.Expr) (string, bool) {
		switch x := e.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				s, err := strconv.Unquote(x.Value)
				return s, err == nil
			}
		case *ast.ParenExpr:
			return fold(x.X)
		case *ast.BinaryExpr:
			if x.Op == token.ADD {
				a, ok1 := fold(x.X)
				b, ok2 := fold(x.Y)
				return a + b, ok1 && ok2
			}
		case *ast.Ident:
			if v, ok := consts[x.Name]; ok {
				return fold(v)
			}
		}
		return "", false
	}
	out := map[string]statement{}
	add := func(text string, st statement) {
		if _, ok := out[text]; !ok {
			out[text] = st
		}
	}
	for _, f := range files {
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			parent := ast.Node(nil)
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			stack = append(stack, n)
			e, ok := n.(ast.Expr)
			if !ok {
				return true
			}
			pos := fset.Position(e.Pos())
			at := filepath.Base(pos.Filename) + ":" + strconv.Itoa(pos.Line)
			if sel, ok := e.(*ast.SelectorExpr); ok { // sqlstore.Name.SQLite
				if inner, ok := sel.X.(*ast.SelectorExpr); ok {
					if pkg, ok := inner.X.(*ast.Ident); ok && pkg.Name == "sqlstore" {
						add("sqlstore."+inner.Sel.Name, statement{at: at, shared: true})
						stack = stack[:len(stack)-1]
						return false
					}
				}
			}
			s, ok := fold(e)
			if !ok || !sqlVerb.MatchString(s) {
				return true
			}
			if _, ok := parent.(*ast.ValueSpec); !ok { // a const is counted where it is used
				be, isSum := parent.(*ast.BinaryExpr)
				text := strings.TrimSpace(space.ReplaceAllString(placeholder.ReplaceAllString(s, "?"), " "))
				add(text, statement{at: at, fragment: isSum && be.Op == token.ADD})
			}
			stack = stack[:len(stack)-1]
			return false
		})
	}
	return out
}
