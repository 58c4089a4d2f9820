package demo;

import java.util.List;

/**
 * Main does things.
 */
@SuppressWarnings("unused")
public class Main {
    private static final String GREETING = "hello";
    private final List<String> names;

    /** Builds one. */
    public Main(List<String> names) {
        this.names = names;
    }

    @Override
    public String toString() {
        return String.join(",", names);
    }

    public static <T> List<T> copy(List<T> in) {
        String s = """
public void fake() {
}
""";
        return List.copyOf(in);
    }

    static class Helper {
        int twice(int x) {
            return 2 * x;
        }
    }

    enum Color {
        RED,
        GREEN;
    }

    public static void main(String[] args) {
        System.out.println(new Main(List.of(args)));
    }
}
