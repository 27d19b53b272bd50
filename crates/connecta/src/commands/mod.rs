pub mod activity;
pub mod check;
pub mod doctor;
pub mod init;
pub mod serve;
