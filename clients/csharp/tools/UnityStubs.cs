// Just enough of UnityEngine's API to compile README.md's Unity example with
// mcs (test.sh), so that the example cannot drift from the library.
namespace UnityEngine
{
    public class Object { }
    public class Component : Object { }
    public class Behaviour : Component { }
    public class MonoBehaviour : Behaviour { }

    public static class PlayerPrefs
    {
        public static string GetString(string key, string defaultValue = "") { return defaultValue; }
        public static void SetString(string key, string value) { }
        public static void DeleteKey(string key) { }
        public static void Save() { }
    }

    public static class Debug
    {
        public static void Log(object message) { }
        public static void LogWarning(object message) { }
    }
}

namespace UnityEngine.UI
{
    public class Text : UnityEngine.Component
    {
        public string text;
    }
}
