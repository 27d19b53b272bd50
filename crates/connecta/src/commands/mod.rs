pub mod activity;
pub mod check;
pub mod credential;
pub mod doctor;
pub mod init;
pub mod serve;
pub mod token;
pub mod vault;
