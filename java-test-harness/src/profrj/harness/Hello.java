package profrj.harness;

/** Smallest possible workload: proves the agent loads and the JVM runs normally. */
public class Hello {
    public static void main(String[] args) {
        System.out.println("hello from the harness");
    }
}
