fn main() {
    print!("{}", infera_core::crd::crd_yaml().unwrap_or_default());
}
