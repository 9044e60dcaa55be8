// ApiCheck says whether an assembly uses only types of .NET Standard: every
// type it references from outside itself must be one that a netstandard.dll
// facade forwards (Mono's, Facades/netstandard.dll, is .NET Standard 2.0, a
// subset of 2.1). It checks types, not members: members are checked by
// keeping to the documented .NET Standard 2.0 API (README, "Compatibility").
//
//   mono ApiCheck.exe path/to/netstandard.dll Podium.dll

using System;
using System.Collections.Generic;
using System.Reflection;

static class ApiCheck
{
    static int Main(string[] args)
    {
        if (args.Length != 2)
        {
            Console.Error.WriteLine("usage: ApiCheck.exe netstandard.dll library.dll");
            return 2;
        }
        var ns = Assembly.LoadFrom(args[0]);
        var lib = Assembly.LoadFrom(args[1]);
        var bad = new SortedSet<string>();
        int n = 0;
        foreach (var m in lib.GetModules())
        {
            // The TypeRef table (0x01): every type the assembly names from elsewhere.
            for (int i = 1; ; i++)
            {
                Type t;
                try { t = m.ResolveType(0x01000000 | i); }
                catch (ArgumentOutOfRangeException) { break; }
                n++;
                if (t.Assembly == lib) continue;
                // GetType follows the facade's type forwarders.
                if (ns.GetType(t.FullName) == null) bad.Add(t.FullName + " (" + t.Assembly.GetName().Name + ")");
            }
        }
        foreach (var b in bad) Console.WriteLine("not in .NET Standard: " + b);
        Console.WriteLine(lib.GetName().Name + ": " + n + " referenced types, " + bad.Count + " outside .NET Standard");
        return bad.Count == 0 ? 0 : 1;
    }
}
