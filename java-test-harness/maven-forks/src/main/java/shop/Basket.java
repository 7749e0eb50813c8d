package shop;

/**
 * Coverage ground truth across forked test JVMs. Every line inside a method body ends with
 * how many times each test class runs it, as `//= TestClass=N ...` (a test class not named
 * runs it 0 times; `//= never`: no test runs it); a line without one holds no code. Each test
 * class runs in a JVM of its own (Surefire's reuseForks=false), so its counts are those of one
 * snapshot, and the counts summed over the test classes are those of the whole build
 * (tests/build_tools.rs reads these comments).
 */
public final class Basket {
    private long total;
    private int items;

    /** BasketTest: 3 baskets; CheckoutTest: 2. */
    public Basket() { //= BasketTest=3 CheckoutTest=2
        total = 0; //= BasketTest=3 CheckoutTest=2
    } //= BasketTest=3 CheckoutTest=2

    /** BasketTest: (250, 2), (100, 1), (5, 0); CheckoutTest: (3000, 2), (1000, 5), (1200, 1). */
    public void add(long price, int quantity) {
        if (quantity <= 0) { //= BasketTest=3 CheckoutTest=3
            throw new IllegalArgumentException("quantity " + quantity); //= BasketTest=1
        }
        total += price * quantity; //= BasketTest=2 CheckoutTest=3
        items += quantity; //= BasketTest=2 CheckoutTest=3
    } //= BasketTest=2 CheckoutTest=3

    public long total() {
        return total; //= BasketTest=2 CheckoutTest=2
    }

    public int items() {
        return items; //= BasketTest=1 CheckoutTest=1
    }

    /** Empties the basket: no test calls it. */
    public void clear() {
        total = 0; //= never
        items = 0; //= never
    } //= never
}
