fn main() {} // placeholder: owner replaces
