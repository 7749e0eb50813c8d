package profrj.harness;

/**
 * A target for attach tests of the alloc mode: AllocSites' two sites in rounds, after printing
 * "ready", until the file named by argument 1 exists.
 */
public class AllocTarget {
    public static void main(String[] args) throws Exception {
        AllocSites.main(new String[] {"until", args[0]});
        System.out.println("done");
    }
}
