using System;

namespace Demo
{
    /// <summary>A greeter.</summary>
    [Serializable]
    public class Greeter
    {
        private readonly string _name;

        public Greeter(string name)
        {
            _name = name;
        }

        public string Greet() => $"Hello {_name}";

        public async Task<int> RunAsync(int n)
        {
            var s = @"
public void Fake() {
""quoted""";
            return n;
        }
    }

    public enum Mode { A, B }
}
